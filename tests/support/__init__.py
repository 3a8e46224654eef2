"""Helpers that start real engines for tests: infercost's own server and llama.cpp's, on 127.0.0.1."""
