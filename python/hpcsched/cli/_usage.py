"""Click's and typer's usage errors (a bad value, an unknown or missing option, an unknown
command) as one line in the user's terms, like every other error of the command: the option at
fault, what is wrong with the value, and the near misses of a mistyped name. Their own display
takes four lines (usage, "Try ... --help", a blank line, the error) and quotes pydantic's
validation messages ("Input should be a valid integer, unable to parse string as an integer")."""

from __future__ import annotations

import re
from typing import Any

from hpcsched.exceptions import close_names, did_you_mean, shown

#: What a value failed to be, by pydantic's error type (typer validates values with it).
_KINDS = {
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "int_type": "a whole number",
    "float_parsing": "a number",
    "float_type": "a number",
    "bool_parsing": "true or false",
    "finite_number": "a finite number",
}
#: The same from click's own messages (typer before it vendored click).
_CLICK_KINDS = {
    "integer": "a whole number",
    "float": "a number",
    "boolean": "true or false",
}


def _kinds(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _param_name(param: Any) -> str:
    """``--window`` for an option (its longest name), ``TRACE`` for an argument."""
    if param is None:
        return ""
    if getattr(param, "param_type_name", "") == "argument":
        return str(param.metavar or (param.name or "").upper())
    opts = [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]
    return max(opts, key=len) if opts else str(param.name or "")


def _sentence(text: str) -> str:
    """Click's sentence as a clause: lower-case start, no final period, one line."""
    text = " ".join(text.split()).rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _bad_value(exc: Any) -> str:
    """What is wrong with the value: ``'abc' is not a whole number``."""
    cause = exc.__cause__
    errors = cause.errors() if cause is not None and hasattr(cause, "errors") else []
    if errors and errors[0].get("type") in _KINDS:
        return f"{shown(errors[0].get('input'))} is not {_KINDS[errors[0]['type']]}"
    message = str(getattr(exc, "message", exc))
    match = re.fullmatch(r"(.*) is not a valid (integer|float|boolean)\.?", message, re.S)
    if match:
        return f"{match[1]} is not {_CLICK_KINDS[match[2]]}"
    return _sentence(message)


def _options_of(command: Any) -> list[str]:
    return [
        opt
        for param in getattr(command, "params", [])
        if getattr(param, "param_type_name", "") == "option"
        for opt in (*param.opts, *getattr(param, "secondary_opts", []))
        if opt.startswith("--")
    ]


def usage_line(exc: BaseException) -> str | None:
    """The one line for a usage error (without ``error:``); None when it is the command's help
    asked for by giving no arguments (``hpcsched``, ``hpcsched reproduce``), shown as it is."""
    kinds = _kinds(exc)
    if "NoArgsIsHelpError" in kinds:
        return None
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "hpcsched"
    usage = ""
    if ctx is not None:
        usage = " ".join(ctx.get_usage().split()).removeprefix("Usage: ")
    message = str(getattr(exc, "message", "") or "")
    if "MissingParameter" in kinds:
        param = getattr(exc, "param", None)
        name = _param_name(param) or "a value"
        what = "argument" if getattr(param, "param_type_name", "") == "argument" else "option"
        return f"{where}: missing {what} {name} (usage: {usage})"
    if "NoSuchOption" in kinds:
        option = str(getattr(exc, "option_name", "") or message.rpartition(" ")[2])
        close = did_you_mean(close_names(option, _options_of(ctx.command) if ctx else []))
        return f"{option}: {where} has no such option" + (f"; {close}" if close else "")
    if "BadParameter" in kinds:
        name = _param_name(getattr(exc, "param", None))
        reason = _bad_value(exc)
        return f"{name}: {reason}" if name else f"{where}: {reason}"
    if "BadOptionUsage" in kinds:
        option = str(getattr(exc, "option_name", ""))
        if message.endswith("requires an argument."):
            return f"{option}: needs a value"
        return f"{option}: {_sentence(message)}" if option else f"{where}: {_sentence(message)}"
    command = re.match(r"No such command '(.*?)'\.", message, re.S)
    if command is not None and ctx is not None:
        names = list(getattr(ctx.command, "commands", {}))
        close = did_you_mean(close_names(command[1], names))
        reason = f"{where} has no command {shown(command[1])}"
        return f"{reason}; {close}" if close else f"{reason}; choose one of: {', '.join(names)}"
    return f"{where}: {_sentence(message)}"
