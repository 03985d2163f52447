"""H.264 sequence parameter sets (ITU-T H.264 7.3.2.1.1), read for what NVDEC would change
silently: interlaced coding (NVDEC deinterlaces what ffmpeg outputs as coded) and layouts;
and the NAL units of an Annex B byte stream."""

from __future__ import annotations

__all__ = [
    "SPS_NAL_TYPE",
    "SPS_SEARCH_PACKETS",
    "BitReader",
    "annexb_nals",
    "sps_layout",
    "sps_size",
]

# profile_idc values whose SPS carries chroma_format_idc, bit depths and scaling matrices
_HIGH_PROFILES = frozenset({100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135})
SPS_NAL_TYPE = 7
# packets searched for the first SPS (MP4/Matroska streams carry it in the first one)
SPS_SEARCH_PACKETS = 16


class BitReader:
    """MSB-first bit reader with Exp-Golomb codes (H.264 9.1); IndexError past the end."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def u(self, n: int) -> int:
        value = 0
        for _ in range(n):
            bit = (self.data[self.pos >> 3] >> (7 - (self.pos & 7))) & 1
            value, self.pos = (value << 1) | bit, self.pos + 1
        return value

    def ue(self) -> int:
        zeros = 0
        while self.u(1) == 0:
            zeros += 1
            if zeros > 31:
                raise ValueError("Exp-Golomb code longer than 32 bits")
        return (1 << zeros) - 1 + self.u(zeros)

    def se(self) -> int:
        k = self.ue()
        return (k + 1) // 2 if k & 1 else -(k // 2)


def annexb_nals(data: bytes) -> list[bytes]:
    """The NAL units of an Annex B byte stream (start codes 00 00 01, leading zeros dropped)."""
    nals = (chunk.rstrip(b"\0") for chunk in data.split(b"\0\0\1")[1:])
    return [nal for nal in nals if nal]


def _skip_scaling_list(bits: BitReader, size: int) -> None:
    last = following = 8
    for _ in range(size):
        if following:
            following = (last + bits.se() + 256) % 256
        last = following or last


def sps_layout(nal: bytes) -> tuple[int, int, bool]:
    """``(chroma_format_idc, luma bit depth, frame_mbs_only_flag)`` of an H.264 SPS NAL unit.

    Raises
    ------
    ValueError, IndexError
        If the NAL unit is not a well-formed SPS.
    """
    return _parse(nal, size=False)[:3]


def sps_size(nal: bytes) -> tuple[int, int]:
    """The frame size an H.264 SPS NAL unit gives, ``(width, height)``, its cropping
    applied (ValueError, IndexError as :func:`sps_layout`)."""
    return _parse(nal, size=True)[3:]


def _parse(nal: bytes, *, size: bool) -> tuple[int, int, bool, int, int]:
    if not nal or nal[0] & 0x1F != SPS_NAL_TYPE:
        raise ValueError("not an SPS NAL unit")
    bits = BitReader(nal[1:].replace(b"\0\0\3", b"\0\0"))  # emulation prevention bytes out
    profile = bits.u(8)
    bits.u(16)  # constraint flags, level_idc
    bits.ue()  # seq_parameter_set_id
    chroma, depth = 1, 8
    if profile in _HIGH_PROFILES:
        chroma = bits.ue()
        if chroma == 3:
            bits.u(1)  # separate_colour_plane_flag
        depth = 8 + bits.ue()
        bits.ue()  # bit_depth_chroma_minus8
        bits.u(1)  # qpprime_y_zero_transform_bypass_flag
        if bits.u(1):  # seq_scaling_matrix_present_flag
            for i in range(8 if chroma != 3 else 12):
                if bits.u(1):
                    _skip_scaling_list(bits, 16 if i < 6 else 64)
    bits.ue()  # log2_max_frame_num_minus4
    poc_type = bits.ue()
    if poc_type == 0:
        bits.ue()  # log2_max_pic_order_cnt_lsb_minus4
    elif poc_type == 1:
        bits.u(1)  # delta_pic_order_always_zero_flag
        bits.se()  # offset_for_non_ref_pic
        bits.se()  # offset_for_top_to_bottom_field
        for _ in range(bits.ue()):
            bits.se()  # offset_for_ref_frame
    bits.ue()  # max_num_ref_frames
    bits.u(1)  # gaps_in_frame_num_value_allowed_flag
    width = 16 * (bits.ue() + 1)  # pic_width_in_mbs_minus1
    map_units = bits.ue() + 1  # pic_height_in_map_units_minus1
    frames_only = bits.u(1)
    height = 16 * map_units * (2 - frames_only)
    if not size:  # the layout alone: read no further
        return chroma, depth, bool(frames_only), width, height
    if not frames_only:
        bits.u(1)  # mb_adaptive_frame_field_flag
    bits.u(1)  # direct_8x8_inference_flag
    if bits.u(1):  # frame_cropping_flag: offsets in chroma samples (7.4.2.1.1)
        left, right, top, bottom = bits.ue(), bits.ue(), bits.ue(), bits.ue()
        unit_x = 1 if chroma in (0, 3) else 2
        unit_y = (2 - frames_only) * (2 if chroma == 1 else 1)
        width -= unit_x * (left + right)
        height -= unit_y * (top + bottom)
    return chroma, depth, bool(frames_only), width, height
