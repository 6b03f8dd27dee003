"""Minimal failing cases found by the fuzzer, one self-contained test each."""
