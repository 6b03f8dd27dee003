"""Calls replayed from a CUDA graph: `mlirfuse.compile(..., mode="reduce-overhead")`.

A specialization's program launches the same kernels and ATen calls on the
same sizes every call; only the tensors differ. `GraphedProgram` runs its
first call as usual (the warm-up: Triton compiles its kernels, cuBLAS makes
its handles), captures the second into a `torch.cuda.CUDAGraph` over static
copies of the user's inputs, and from then on a call copies the inputs into
those buffers, replays the graph and returns copies of its results: the
host's per-launch work (binding arguments, the launchers' Python, Triton's
`JITFunction.run`) is paid once, at the capture.

Guards, beyond the specialization's own (shapes, dtypes, devices): the
parameters, buffers and constants the graph read are the same tensors (same
storage, shape and strides: an optimizer updating them in place is fine, a
parameter swapped for a new tensor captures anew); every other argument
equals the captured one. Results are copied out of the graph's buffers, so
a call's outputs are never overwritten by the next replay; a result that is
a view of an input would be a view of the graph's copy, not of the caller's
tensor, so such a program is not graphed.

Programs that are never graphed, with the reason in `stats["not_graphed"]`
(they run as without the mode): random ops (a replay would repeat the
captured numbers), inputs not all on one CUDA device, bounds-checked
launches (`MLIRFUSE_CHECK_BOUNDS`: they read their guards on the host), a
capture that fails (an op that synchronizes with the host, such as a
data-dependent size), a call made while another capture is under way.
"""

from __future__ import annotations

import logging

import torch

from mlirfuse.runtime import checks

logger = logging.getLogger("mlirfuse")

MODES = ("default", "reduce-overhead")

# ATen ops drawing random numbers without saying so in their tags (the tag covers the others).
_RANDOM_NAMES = ("rand", "bernoulli", "dropout", "normal", "uniform", "multinomial", "exponential", "poisson")


def check_mode(mode) -> str:
    if mode is None:
        return "default"
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
    return mode


def random_step(program) -> str | None:
    """The first ATen call of `program` (its callees' included) that draws random numbers, or None."""
    for step in program.flat_steps():
        if step.kind != "aten":
            continue
        tags = getattr(step.fn, "tags", ())
        if torch.Tag.nondeterministic_seeded in tags or any(n in step.name for n in _RANDOM_NAMES):
            return step.name
    return None


# Shapes (of the user's inputs) one program keeps a graph for; calls with more run without one.
MAX_GRAPHS = 8


class _Captured:
    """One capture: the graph, the arguments it read (the user's inputs as its own copies) and its results."""

    def __init__(self, graph, static: list, results: list, fixed_keys: list):
        self.graph, self.static, self.results, self.fixed_keys = graph, static, results, fixed_keys
        # The fast check per call: the same tensor object at the same address (then its key holds).
        self.fixed_objects = [(a, a.data_ptr()) if isinstance(a, torch.Tensor) and key is not None else None
                              for a, key in zip(static, fixed_keys)]


class GraphedProgram:
    """`program`'s calls through CUDA graphs where they can be (see the module docstring), one per shape of the
    user's inputs (a `dynamic_shapes` program serves several); `kinds`: per argument of the program, how the
    caller binds it ("param", "buffer", "constant", or a user input)."""

    def __init__(self, program, kinds: list[str]):
        self.program = program
        self._fixed = [kind in ("param", "buffer", "constant") for kind in kinds]
        self.stats = {"warmups": 0, "captures": 0, "replays": 0, "ungraphed_calls": 0, "not_graphed": None}
        self._graphs: dict[tuple, _Captured] = {}
        self._warmed: set[tuple] = set()
        self._pool = None
        random = random_step(program)
        self._never = f"it draws random numbers ({random}): a replay would repeat them" if random else None
        self.stats["not_graphed"] = self._never

    def execute(self, arguments: list) -> list:
        """The results for `arguments` (a list the program takes over, as `Program.execute`)."""
        why = self._never or self._why_not_now()
        if why is None:
            key = self._shape_key(arguments)
            captured = self._graphs.get(key)
            if captured is not None and self._same_fixed(captured, arguments):
                return self._replay(captured, arguments)
            # Every argument's device, only off the replay path: a replay's key holds its inputs' devices,
            # and the arguments it read as they are are the same storages.
            why = self._why_not_devices(arguments)
        if why is None:
            if key not in self._warmed:
                if len(self._warmed) >= MAX_GRAPHS:
                    why = f"more than {MAX_GRAPHS} input shapes: a new one runs without a graph"
                else:
                    self._warmed.add(key)
                    self.stats["warmups"] += 1
                    return self._warm_up(arguments)
            else:  # warmed up, or a parameter or buffer is another tensor now: capture (anew)
                return self._capture(key, arguments)
        self.stats["ungraphed_calls"] += 1
        self.stats["not_graphed"] = why
        return self.program.execute(arguments)

    @staticmethod
    def _why_not_now() -> str | None:
        if checks.enabled():
            return "bounds-checked launches (MLIRFUSE_CHECK_BOUNDS) read their guards on the host"
        if not torch.cuda.is_available():
            return "no CUDA device"
        if torch.cuda.is_current_stream_capturing():
            return "called during another CUDA graph capture"
        return None

    @staticmethod
    def _why_not_devices(arguments: list) -> str | None:
        device = None
        for a in arguments:
            if isinstance(a, torch.Tensor):
                if a.device.type != "cuda":
                    return f"an argument is on the {a.device.type}, not a CUDA device"
                if device is None:
                    device = a.device
                elif a.device != device:
                    return "arguments on several CUDA devices"
        if device is None:
            return "no tensor argument on a CUDA device"
        return None

    def _shape_key(self, arguments: list) -> tuple:
        return tuple((tuple(a.shape), a.dtype, a.device) if isinstance(a, torch.Tensor) else None
                     for a, fixed in zip(arguments, self._fixed) if not fixed)

    def _warm_up(self, arguments: list) -> list:
        """A shape's first call, run as usual on a side stream (the capture's stream is one too: libraries such
        as cuBLAS set up per stream); Triton compiles its kernels here, not during the capture."""
        main = torch.cuda.current_stream()
        side = torch.cuda.Stream()
        side.wait_stream(main)
        with torch.cuda.stream(side):
            results = self.program.execute(arguments)
        main.wait_stream(side)
        for r in results:
            if isinstance(r, torch.Tensor):
                r.record_stream(main)
        return results

    def _capture(self, key: tuple, arguments: list) -> list:
        static = [a if fixed or not isinstance(a, torch.Tensor) else torch.empty_like(a).copy_(a)
                  for a, fixed in zip(arguments, self._fixed)]
        if self._pool is None:
            self._pool = torch.cuda.graph_pool_handle()
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph, pool=self._pool):
                results = self.program.execute(list(static))
        except Exception as e:  # the program does something a capture cannot hold
            first = str(e).splitlines()[0] if str(e) else ""
            return self._give_up(f"the capture failed: {type(e).__name__}: {first}", arguments)
        inputs = {a.untyped_storage().data_ptr() for a, fixed in zip(static, self._fixed)
                  if not fixed and isinstance(a, torch.Tensor)}
        if any(isinstance(r, torch.Tensor) and r.untyped_storage().data_ptr() in inputs for r in results):
            return self._give_up("a result is a view of an input: a replay would return a view of the graph's copy",
                                 arguments)
        fixed_keys = [_key(a) if fixed or not isinstance(a, torch.Tensor) else None
                      for a, fixed in zip(static, self._fixed)]
        captured = self._graphs[key] = _Captured(graph, static, results, fixed_keys)
        self.stats["captures"] += 1
        return self._replay(captured, arguments)

    def _give_up(self, why: str, arguments: list) -> list:
        self._never = self.stats["not_graphed"] = why
        self._graphs.clear()
        logger.warning("mlirfuse: mode='reduce-overhead' runs without a CUDA graph: %s", why)
        self.stats["ungraphed_calls"] += 1
        return self.program.execute(arguments)

    def _same_fixed(self, captured: _Captured, arguments: list) -> bool:
        for a, key, seen in zip(arguments, captured.fixed_keys, captured.fixed_objects):
            if key is None or (seen is not None and a is seen[0] and a.data_ptr() == seen[1]):
                continue
            if _key(a) != key:
                return False
        return True

    def _replay(self, captured: _Captured, arguments: list) -> list:
        for a, s, fixed in zip(arguments, captured.static, self._fixed):
            if not fixed and isinstance(a, torch.Tensor) and a is not s:
                s.copy_(a)
        arguments.clear()  # as `Program.execute`: the caller's list is taken over
        captured.graph.replay()
        self.stats["replays"] += 1
        return [r.clone() if isinstance(r, torch.Tensor) else r for r in captured.results]


def _key(a) -> tuple:
    """What a graph assumes of an argument it read as is: a tensor's storage and layout, another value's value."""
    if not isinstance(a, torch.Tensor):
        return ("value", a)
    return (a.untyped_storage().data_ptr(), a.storage_offset(), tuple(a.shape), a.stride(), a.dtype)


__all__ = ["GraphedProgram", "MODES", "check_mode", "random_step"]
