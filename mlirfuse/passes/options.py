"""Pass options as typed dataclass fields, each with its help text in the field's metadata.

    @dataclasses.dataclass(frozen=True)
    class FuseVertical(ModulePass):
        limits: Limits = option_group(Limits)                                   # max-args, max-group-size
        recompute_analyses: bool = option(False, "rebuild the dependence analysis ...")

A pass's options are its fields in order, an option group's (`Limits`)
in the group's place, spelled kebab-case (`max_group_size` is
`max-group-size`). A pass taking one option of a group declares it with
`option_of(Limits, "max_args")`: one declaration of each shared option,
so passes sharing one share its type, default and meaning. `--help`,
`embed.pass_options` and the pipeline parser read them here
(`declared`), and `option` refuses an empty help text.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

from mlirfuse.errors import PipelineError


def option(default, help: str) -> dataclasses.Field:
    """A pass option: a field with `default`, documented by `help` (what `mlirfuse-opt --help` prints)."""
    if not help.strip():
        raise ValueError("a pass option needs its help text")
    return dataclasses.field(default=default, metadata={"help": help})


def option_group(cls: type) -> dataclasses.Field:
    """A field holding option group `cls` (a frozen dataclass of options): the pass takes all its options."""
    return dataclasses.field(default_factory=cls, metadata={"group": cls})


def option_of(cls: type, name: str) -> dataclasses.Field:
    """Option `name` of group (or pass) `cls` declared again for a pass taking only it: same default and help."""
    declared_field = next(f for f in dataclasses.fields(cls) if f.name == name)
    return dataclasses.field(default=declared_field.default, metadata=declared_field.metadata)


@dataclasses.dataclass(frozen=True)
class Limits:
    """How far a fusion pass may grow one kernel: the option group of the passes that merge groups."""

    max_args: int = option(128, "most tensor arguments (inputs + results) of one kernel")
    max_group_size: int = option(0, "most torch ops in one group (0: no limit)")


@dataclasses.dataclass(frozen=True)
class PassOption:
    """One option of a pass or pipeline, as `--pass-pipeline` and the flags spell it."""

    name: str  # kebab-case: max-args
    type: str  # bool, int, float or str
    default: object
    doc: str

    def __str__(self) -> str:
        default = str(self.default).lower() if isinstance(self.default, bool) else self.default
        return f"{self.name}=<{self.type}> (default {default}): {self.doc}"


class Declared(NamedTuple):
    """An option of a pass with where its value goes: the field path (`("limits", "max_args")`)."""

    option: PassOption
    path: tuple[str, ...]


def _type_name(annotation) -> str:
    return annotation if isinstance(annotation, str) else annotation.__name__


@functools.cache
def declared(cls: type) -> tuple[Declared, ...]:
    """The options of pass (or option group) `cls`, in field order, a group's in its place."""
    found = []
    for f in dataclasses.fields(cls):
        inner = f.metadata.get("group")
        if inner is not None:
            found += [Declared(d.option, (f.name, *d.path)) for d in declared(inner)]
            continue
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        found.append(Declared(PassOption(f.name.replace("_", "-"), _type_name(f.type), default, f.metadata.get("help", "")), (f.name,)))
    return tuple(found)


def build(cls: type, values: dict[tuple[str, ...], object]):
    """An instance of `cls` from typed values keyed by field path; the rest keep their defaults."""
    kwargs, groups = {}, {}
    for path, value in values.items():
        if len(path) == 1:
            kwargs[path[0]] = value
        else:
            groups.setdefault(path[0], {})[path[1:]] = value
    for name, inner in groups.items():
        kwargs[name] = build(next(f for f in dataclasses.fields(cls) if f.name == name).metadata["group"], inner)
    return cls(**kwargs)


def parse_option(pass_name: str, key: str, type_name, text: str):
    """`text` as a value of option `key` (as given) of `pass_name`, typed `type_name`; a PipelineError naming both if it is not one."""
    type_name = _type_name(type_name)
    try:
        if type_name == "bool":
            if text not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text in ("true", "1")
        if type_name == "int":
            return int(text)
        if type_name == "float":
            return float(text)
        return text
    except ValueError:
        raise PipelineError(
            f"option '{key}' of pass '{pass_name}' expects {type_name}, got '{text}'", option=key
        ) from None


def option_text(value) -> str:
    """A Python option value as pipeline text spells it: `True` -> `true`, `64` -> `64`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
