"""What the benchmark modules share: checked thunks made once per process, and
the three benchmark classes of a problem (:func:`benchmark_classes`)."""

import functools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from dualad import bench


def _asv_quick() -> bool:
    """Whether this process discovers or runs benchmarks for ``asv run --quick``.

    ``DUALAD_ASV_QUICK=1`` (or ``0``) says so. Without it, on Linux, the command line of
    the asv process that started this one (a parent or grandparent: asv passes no sign of
    ``--quick`` to the processes that discover and run the benchmarks) is read.
    """
    flag = os.environ.get("DUALAD_ASV_QUICK")
    if flag is not None:
        return flag.strip().lower() not in ("", "0", "no", "false", "off")
    pid = os.getppid()
    for _ in range(4):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        if any(Path(a.decode(errors="replace")).name == "asv" for a in args[:3]):
            return b"--quick" in args or b"-q" in args
        pid = int(stat.rsplit(")", 1)[1].split()[1])   # the parent's parent
    return False


#: A smoke run (``asv run --quick``, see :func:`_asv_quick`): each benchmark once, and the
#: sweeps without their largest sizes (:func:`sweep_sizes`).
QUICK = _asv_quick()


#: How many sizes of each sweep a quick run keeps, the smallest.
QUICK_SIZES = 2


def sweep_sizes(values: Sequence) -> list:
    """A sweep's sizes (smallest first): all of them, or in a quick run the
    :data:`QUICK_SIZES` smallest. asv fixes ``params`` when it discovers the benchmarks,
    in a process that reads :data:`QUICK` as the processes that run them do."""
    return list(values)[:QUICK_SIZES] if QUICK else list(values)


@functools.cache
def thunk(problem: str, impl: str) -> bench.Thunk:
    """``bench.PROBLEMS[problem].make(impl)``, made (and checked) once per process.

    The asv_runner installed here re-runs ``setup`` before every timed sample and
    times one call per sample when a class has a ``setup`` (asv#966). Building
    the thunk there each time would time every call just after a fresh build,
    a recompilation for ``jax.jit``, with cold caches; with this cache a repeated
    ``setup`` costs a dictionary look-up and the timed calls are warm. A peer
    that is missing raises ``PeerUnavailable`` (``NotImplementedError``: asv
    skips it) every time, since exceptions are not cached.
    """
    return bench.PROBLEMS[problem].make(impl)


#: The parameter of a Peers class left without peers by a quick run (asv needs one).
_NO_PEER = "none (quick run)"


class _Implementation:
    """One implementation of a problem: the last parameter names it, after the
    problem's size ``n`` in a size sweep. (The leading underscore keeps asv from
    taking these base classes for benchmarks.)"""

    problems: dict[tuple, str] = {}  # (n,), or () for a single problem -> problem name

    def setup(self, *params):
        *size, impl = params
        if impl == _NO_PEER:
            raise NotImplementedError("no peer in a quick run")  # (asv skips it)
        self.problem = self.problems[tuple(size)]
        self.call = thunk(self.problem, impl)


class _Times(_Implementation):
    def time_call(self, *params):
        self.call()


class _RatioTo(_Implementation):
    """Time of one call over the ``baseline`` implementation's, both timed in this
    process (:func:`dualad.bench.measure`, round-robin)."""

    measure_repeat, measure_min_time = 5, 0.05  # bench.measure's repeat and min_time
    baseline = "primal"

    def setup(self, *params):
        super().setup(*params)
        self.base = thunk(self.problem, self.baseline)

    def ratio(self, impl):
        # (a quick run: one round of short samples, a smoke test rather than a figure)
        repeat, min_time = (1, 0.01) if QUICK else (self.measure_repeat,
                                                    self.measure_min_time)
        times = bench.measure({"baseline": self.base, impl: self.call},
                              repeat=repeat, min_time=min_time)
        return times[impl] / times["baseline"]


class _Ratio(_RatioTo):
    def track_ratio_to_primal(self, *params):
        return self.ratio(params[-1])

    track_ratio_to_primal.unit = "ratio"


class _Versus(_RatioTo):
    def track_ratio_to_peer(self, *params):
        return self.ratio(params[-1])

    track_ratio_to_peer.unit = "ratio"


#: asv's ``rounds`` for every class here (asv's default is 2): each round starts
#: one process per benchmark and parameter, and starting one (Python, dualad, the
#: peer: jax or torch take seconds to import) costs more than most benchmarks'
#: sampling; one round keeps the full suite at about 20 minutes on 2 cores.
ROUNDS = 1


def benchmark_classes(module: str, name: str, problems: str | Mapping[int, str], *,
                      timeout: float = 120.0, ratio_repeat: int = 5,
                      ratio_min_time: float = 0.05,
                      peers_repeat: tuple[int, int, float] | int = 0,
                      versus: bool = False,
                      quick_peers: Sequence[str] | None = None) -> tuple[type, ...]:
    """The three asv classes of one problem of :data:`dualad.bench.PROBLEMS`, or of
    a size sweep given as ``{n: problem name}``, smallest first (``n`` becomes the first
    parameter; a quick run keeps the smallest sizes, :func:`sweep_sizes`):

    - ``name.time_call``: absolute times of the NumPy primal and of dualad's
      implementation(s), parameter ``impl``;
    - ``namePeers.time_call``: absolute times of the peers, parameter ``peer``;
    - ``nameRatio.track_ratio_to_primal``: dualad's and the peers' times over the
      primal's, both timed in this process (:func:`dualad.bench.measure` with
      ``ratio_repeat`` and ``ratio_min_time``), unit "ratio";

    and with ``versus`` (a problem with a :attr:`~dualad.bench.Problem.versus`
    peer, e.g. the compiled problems' ``jax.jit``) a fourth:

    - ``nameVersus.track_ratio_to_peer``: dualad's time over that peer's, timed
      the same way (the compiled problems' targets are such ratios).

    ``module`` is the caller's ``__name__``, and the caller binds the classes to
    module-level names: asv finds benchmark classes among a module's attributes
    and names them after the module and the class's ``__name__``. ``timeout``
    applies to all the classes, as do ``rounds`` = :data:`ROUNDS`;
    ``peers_repeat`` is the peers' asv ``repeat`` (0: asv's default); a quick run keeps
    only the peers named in ``quick_peers`` (all of them if None).
    """
    names = ({(): problems} if isinstance(problems, str)
             else {(n,): problems[n] for n in sweep_sizes(problems)})
    sizes = [key[0] for key in names if key]
    first = bench.PROBLEMS[next(iter(names.values()))]
    peers = [p for p in first.peers if not QUICK or quick_peers is None or p in quick_peers]

    def parametrised(impls, param):
        """asv ``params`` and ``param_names``: the sizes, if any, then ``impls``."""
        return ([sizes, impls], ["n", param]) if sizes else (impls, [param])

    class Times(_Times):
        """Absolute times of one call: the NumPy primal and dualad's transform(s)."""

        params, param_names = parametrised(["primal", *first.own], "impl")

    class Peers(_Times):
        """Absolute times of one call of the same transform by peer libraries."""

        params, param_names = parametrised(peers or [_NO_PEER], "peer")
        repeat = peers_repeat

    class Ratio(_Ratio):
        """Time over the NumPy primal's, both timed in this process (the dashboard's
        ratios, which survive a change of machine far better than absolute times)."""

        params, param_names = parametrised([*first.own, *peers], "impl")
        measure_repeat, measure_min_time = ratio_repeat, ratio_min_time

    class Versus(_Versus):
        """dualad's time over the ``versus`` peer's, both timed in this process."""

        params, param_names = parametrised(list(first.own), "impl")
        measure_repeat, measure_min_time = ratio_repeat, ratio_min_time
        baseline = first.versus

    classes = ((Times, ""), (Peers, "Peers"), (Ratio, "Ratio"))
    if versus:
        if first.versus is None:
            raise ValueError(f"{first.name} has no versus peer")
        classes += ((Versus, "Versus"),)
    for cls, suffix in classes:
        cls.__name__ = cls.__qualname__ = name + suffix
        cls.__module__ = module
        cls.problems, cls.timeout, cls.rounds = names, timeout, ROUNDS
    return tuple(cls for cls, _ in classes)
