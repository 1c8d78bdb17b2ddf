"""Checks of the numeric arguments the model helpers take, before any model is touched.

A value of the wrong type raises :class:`~lamina.errors.InvalidTypeError`; a value out of
range raises :class:`~lamina.errors.InvalidInputError`. ``True`` is not an int here.
"""

from __future__ import annotations

from ..errors import InvalidInputError, InvalidTypeError


def int_arg(name: str, value: object, minimum: int) -> int:
    """``value`` if it is an int of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {value}")
    return value


def seconds_arg(name: str, value: object) -> float:
    """``value`` as float seconds if it is a positive number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidTypeError(f"{name} must be a number of seconds, got {type(value).__name__}")
    if not value > 0:
        raise InvalidInputError(f"{name} must be > 0 seconds, got {value}")
    return float(value)


__all__ = ["int_arg", "seconds_arg"]
