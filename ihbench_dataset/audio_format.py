"""The one audio format the dataset stores and models are given: 16 kHz mono.

Its own module, so the contract (`schema`) and the codec (`audio`) both take it from below
without importing each other, and reading it costs no numpy.
"""
SAMPLING_RATE = 16_000
