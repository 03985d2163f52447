"""HEVC sequence parameter sets (ITU-T H.265 7.3.2.2.1), read for the frame size each one
gives: NVDEC does not stop where a stream's frames change size (:mod:`.reader`)."""

from __future__ import annotations

from admcuda.io.nvdec.h264 import BitReader

__all__ = ["SPS_NAL_TYPE", "sps_size"]

SPS_NAL_TYPE = 33  # in bits 1..6 of a NAL unit's first header byte


def sps_size(nal: bytes) -> tuple[int, int]:
    """The frame size an HEVC SPS NAL unit gives, ``(width, height)``, its conformance
    window applied.

    Raises
    ------
    ValueError, IndexError
        If the NAL unit is not a well-formed SPS.
    """
    if len(nal) < 3 or (nal[0] >> 1) & 0x3F != SPS_NAL_TYPE:
        raise ValueError("not an SPS NAL unit")
    bits = BitReader(nal[2:].replace(b"\0\0\3", b"\0\0"))  # emulation prevention bytes out
    bits.u(4)  # sps_video_parameter_set_id
    sub_layers = bits.u(3)  # sps_max_sub_layers_minus1
    bits.u(1)  # sps_temporal_id_nesting_flag
    _skip_profile_tier_level(bits, sub_layers)
    bits.ue()  # sps_seq_parameter_set_id
    chroma = bits.ue()
    if chroma == 3:
        bits.u(1)  # separate_colour_plane_flag
    width, height = bits.ue(), bits.ue()
    if bits.u(1):  # conformance_window_flag: offsets in chroma samples (7.4.3.2.1)
        left, right, top, bottom = bits.ue(), bits.ue(), bits.ue(), bits.ue()
        unit_x = 2 if chroma in (1, 2) else 1
        unit_y = 2 if chroma == 1 else 1
        width -= unit_x * (left + right)
        height -= unit_y * (top + bottom)
    return width, height


def _skip_profile_tier_level(bits: BitReader, sub_layers: int) -> None:
    """profile_tier_level(1, sps_max_sub_layers_minus1) (7.3.3)."""
    bits.u(32)  # profile space, tier, profile idc, the first 24 compatibility flags
    bits.u(32)  # the last 8 compatibility flags, 4 source flags, 20 constraint bits
    bits.u(32)  # 24 more constraint bits, general_level_idc
    present = [(bits.u(1), bits.u(1)) for _ in range(sub_layers)]
    if sub_layers:
        bits.u(2 * (8 - sub_layers))  # reserved_zero_2bits
    for profile, level in present:
        if profile:
            bits.u(32)
            bits.u(32)
            bits.u(24)  # sub-layer profile: 88 bits
        if level:
            bits.u(8)  # sub_layer_level_idc
