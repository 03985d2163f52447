"""libvmaf's VMAF model files, byte-identical copies (provenance in README.md)."""
