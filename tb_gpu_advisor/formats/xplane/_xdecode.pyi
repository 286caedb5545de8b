# The native XSpace scanner (_xdecode.c); see native.py for what it returns.
def decode(
    buffer: object, wanted: tuple[str, ...], lazy: bool = ..., /
) -> tuple[list, list[str], list[str], list[str], list[bytes]]: ...
def strings_table(strings: list[bytes], /) -> object: ...
def decode_line(
    buffer: object,
    start: int,
    end: int,
    n_events: int,
    stat_names: dict[int, str],
    wanted: tuple[str, ...],
    table: object,
    described: tuple[int, ...] = ...,
    limit: int = ...,
    /,
) -> tuple[bytearray, bytearray, bytearray, dict[int, tuple[bytearray, bytearray]], object | None, object | None]: ...
