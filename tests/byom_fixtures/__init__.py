"""Broken bring-your-own-model packages: each fails the factory contract in one way."""
