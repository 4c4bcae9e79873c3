"""Key material the installers' parsers must refuse without crashing."""

# a valid PEM EC key on a curve cryptography cannot load (secp112r1): UnsupportedAlgorithm, not ValueError
UNSUPPORTED_CURVE_KEY = b"""-----BEGIN EC PRIVATE KEY-----
MD4CAQEEDmqFie0e1Py7+OIX1ogHoAcGBSuBBAAGoSADHgAEl+z+F1gORFyZNvWQ
lP2CV1dDY+u9AR+FYicYiQ==
-----END EC PRIVATE KEY-----
"""
