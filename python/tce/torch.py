"""Calibration error in PyTorch training and evaluation loops, in bounded memory.

Imported only when asked for (``import tce.torch``); it needs torch and torchmetrics
(the extra ``tce-calibration[torch]``). :class:`CalibrationError` is a
``torchmetrics.Metric`` with the arguments of ``torchmetrics.CalibrationError`` (``task``,
``n_bins``, ``norm``, ``num_classes``, ``ignore_index``, ``validate_args``), so that it
replaces it in place, plus tce's own (``binning``, ``estimator``, ``capacity``, ...).

torchmetrics' metric appends every prediction to a list and all-gathers the lists across
ranks, so its memory grows with the evaluation (pixel-level segmentation, long runs).
This one keeps a tce state of fixed size instead: an equal-width histogram (a few hundred
bytes, exact) or, for equal-mass bins and the sweep, a sample state of at most
``capacity`` samples. Across ranks it merges the states' portable bytes (gathered as
uint8 tensors), never the predictions. Every number comes from the Rust core.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, List, Optional

try:
    import torch
    from torchmetrics import Metric
    from torchmetrics.utilities.distributed import gather_all_tensors
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tce.torch needs torch and torchmetrics: pip install 'tce-calibration[torch]' "
        f"(or pip install torch torchmetrics); the import failed with: {e}"
    ) from e

import tce
from tce._py import InvalidOption

__all__ = ["CalibrationError"]

_TASKS = ("binary", "multiclass")
_NORMS = {"l1": 1.0, "l2": 2.0, "max": None}
_BINNINGS = ("equal_width", "equal_mass")
_ESTIMATORS = ("bin", "debiased", "sweep")
_CONVENTIONS = ("torchmetrics", "tce")
_ON_FULL = ("sample", "error")
# Mixes the rank into a reservoir's seed (the golden-ratio increment, as tce.spark does
# with partitions), so that ranks draw independent samples from one configured seed.
_SEED_STEP = 0x9E3779B97F4A7C15


def _choice(name: str, value: Any, allowed) -> Any:
    if value not in allowed:
        raise InvalidOption(f"{name}={value!r}: expected one of {', '.join(map(repr, allowed))}")
    return value


class CalibrationError(Metric):
    """Top-label calibration error of a binary or multiclass classifier, accumulated in a
    tce state of bounded size and synchronised across ranks by merging states.

    torchmetrics' arguments, with their meanings and defaults:

    - ``task``: ``"binary"`` (``preds`` of shape (N, ...): the probability of class 1, or
      logits; ``target`` 0/1) or ``"multiclass"`` (``preds`` (N, C, ...) probabilities or
      logits, ``target`` (N, ...) class ids). Extra dimensions are flattened into N.
      As in torchmetrics, a batch with any value outside [0, 1] is taken as logits
      (sigmoid for binary, softmax over dim 1 for multiclass).
    - ``n_bins`` (15), ``norm`` (``"l1"``, ``"l2"`` or ``"max"``: ECE, RMSCE, MCE),
      ``num_classes`` (multiclass), ``ignore_index`` (targets equal to it are dropped),
      ``validate_args`` (check the arguments' and tensors' shapes and dtypes).

    tce's arguments:

    - ``binning``: ``"equal_width"`` (torchmetrics' bins) or ``"equal_mass"``.
    - ``estimator``: ``"bin"`` (ECE_bin, torchmetrics' estimator), ``"debiased"``
      (ECE_debias, ``norm`` l1 or l2), ``"sweep"`` (ECE_sweep: the bin count is chosen
      from the data, ``n_bins`` is not used; ``norm`` l1 or l2).
    - ``convention``: ``"torchmetrics"`` (default) reproduces torchmetrics' numbers: a
      confidence of exactly 1.0 gets an equal-width bin of its own (torchmetrics'
      ``bucketize`` makes ``n_bins + 1`` bins), and logits are turned into
      probabilities by torch in the input's dtype (float32 for float16 and bfloat16,
      which are read as float32 first). ``"tce"``: the paper's convention, a
      confidence of 1.0 in the top bin, and logits transformed in float64 (multiclass:
      the core's softmax; binary: torch's sigmoid of the float64 logit).
      Equal-mass bins, ``"debiased"`` and ``"sweep"`` are tce's own: there, only the
      handling of logits follows ``convention``.
    - ``closure``: ``"left"`` ([k/B, (k+1)/B), torchmetrics' and the paper's) or
      ``"right"`` ((k/B, (k+1)/B], Guo et al.'s); ``"right"`` needs ``convention="tce"``.
    - ``ties``: equal-mass ties, ``"split"`` or ``"keep"`` (docs/estimators.md).
    - ``capacity`` (100 000), ``on_full``, ``seed`` (0): the sample state of equal-mass
      bins and of the sweep holds at most ``capacity`` samples per rank (16 bytes each
      in memory, 9 in the portable format).
      Until it is full it holds every sample and the estimate is exact. Past it,
      ``on_full="sample"`` keeps a uniform random sample of ``capacity`` of them
      (reservoir sampling, seeded with ``seed`` mixed with the rank; a ``UserWarning``
      says so once, and :attr:`sampled` is True), ``on_full="error"`` raises
      :class:`tce.BufferFull` from the update that does not fit (recording none of it).
      The reservoir's sample depends on the seed, the batches and the points where the
      state is read (``compute``, :meth:`estimate`, :attr:`state_nbytes`, a sync): a
      read sorts the held samples in place, and later replacements pick slots by
      position. It is a uniform sample either way, and the same for the same run.
      Equal-width ``"bin"`` and ``"debiased"`` keep a histogram of ``n_bins`` bins (and
      one of one bin for the confidences of 1.0): exact, whatever the number of samples.

    Memory: the state's portable bytes (:attr:`state_nbytes`) do not grow with the number
    of batches: a fixed size for histograms (a header and 32 bytes a bin), at most a
    header and 9 bytes a sample up to ``capacity`` for the sample state. Each update
    moves the batch to the CPU once (``.detach().cpu()``); GPU tensors are accepted. ``compute`` returns a 0-dim float32
    tensor on the metric's device, as torchmetrics does; :meth:`estimate` gives tce's
    ``Estimate`` (float64 value, samples, bins). Bad values raise tce's named errors
    (``tce.ScoreOutOfRange``, ``tce.InvalidLabel``, ``tce.NotNormalized``, ...); no
    samples at ``compute`` is ``tce.NoSamples``.
    """

    is_differentiable = False
    higher_is_better = False
    # A batch's state merges into the global one (states merge exactly), so forward
    # needs one update per batch, not two.
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self,
        task: str = "binary",
        n_bins: int = 15,
        norm: str = "l1",
        num_classes: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        *,
        binning: str = "equal_width",
        estimator: str = "bin",
        convention: str = "torchmetrics",
        closure: str = "left",
        ties: str = "split",
        capacity: int = 100_000,
        on_full: str = "sample",
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.task = _choice("task", task, _TASKS)
        self.norm = _choice("norm", norm, tuple(_NORMS))
        self.binning = _choice("binning", binning, _BINNINGS)
        self.estimator = _choice("estimator", estimator, _ESTIMATORS)
        self.convention = _choice("convention", convention, _CONVENTIONS)
        self.on_full = _choice("on_full", on_full, _ON_FULL)
        _choice("closure", closure, ("left", "right"))
        _choice("ties", ties, ("split", "keep"))
        if not isinstance(n_bins, int) or isinstance(n_bins, bool):
            raise TypeError(f"n_bins must be an int, not {type(n_bins).__name__}")
        if task == "multiclass":
            if not isinstance(num_classes, int) or num_classes < 2:
                raise InvalidOption(f"num_classes={num_classes!r}: multiclass needs an int of at least 2")
        if ignore_index is not None and not isinstance(ignore_index, int):
            raise InvalidOption(f"ignore_index={ignore_index!r}: expected None or an int")
        if _NORMS[norm] is None and estimator != "bin":
            raise InvalidOption(f'norm="max" is the maximum gap over bins; estimator={estimator!r} '
                                'needs norm "l1" or "l2"')
        if closure == "right" and convention == "torchmetrics":
            raise InvalidOption('closure="right" is not torchmetrics\' convention: pass '
                                'convention="tce" with it')
        self.n_bins = n_bins
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.validate_args = validate_args
        self.closure = closure
        self.ties = ties
        self.capacity = capacity
        self.seed = seed
        # Histograms for equal-width ECE_bin and ECE_debias; a sample state otherwise.
        self._histogram = binning == "equal_width" and estimator != "sweep"
        # torchmetrics' bin of its own for confidences of exactly 1.0 (ECE_bin only: the
        # other estimators are tce's).
        self._one_bin = self._histogram and convention == "torchmetrics" and estimator == "bin"
        self._warned = False
        # Checks every option against the core now (bins, closure, ties, capacity, seed),
        # so that a bad one fails here rather than at the first batch.
        self._states: Optional[List[Any]] = self._new_states(rank=0)
        if not self._histogram:
            probe = tce.SortedBuffer(1)
            probe.update([0.5], [1])
            probe.ece_bin(binning=binning, bins=n_bins, closure=closure, ties=ties)
        self._states = None

    # -- the tce states ----------------------------------------------------------------

    def _new_states(self, rank: Optional[int] = None) -> List[Any]:
        if self._histogram:
            states = [tce.Histogram(bins=self.n_bins, closure=self.closure)]
            if self._one_bin:
                states.append(tce.Histogram(bins=1))
            return states
        if self.on_full == "error":
            return [tce.SortedBuffer(self.capacity)]
        if rank is None:
            rank = _rank()
        return [tce.Reservoir(self.capacity, seed=(self.seed + rank * _SEED_STEP) % 2**64)]

    @property
    def states(self) -> List[Any]:
        """This rank's tce states (created at the first use after a reset)."""
        if self._states is None:
            self._states = self._new_states()
        return self._states

    @property
    def state_nbytes(self) -> int:
        """The size in bytes of this rank's states in the portable format: what a sync
        sends. It does not grow with the number of batches (bounded by ``n_bins`` or by
        ``capacity``)."""
        return sum(len(s.to_bytes()) for s in self.states)

    @property
    def sampled(self) -> bool:
        """True when the sample state holds a uniform sample of fewer samples than it saw
        (``on_full="sample"`` past ``capacity``): the estimate is then over that sample."""
        s = self.states[0]
        return isinstance(s, tce.Reservoir) and s.seen > len(s)

    # -- torchmetrics' Metric ------------------------------------------------------------

    def update(self, preds: "torch.Tensor", target: "torch.Tensor") -> None:
        """Adds a batch: ``preds`` and ``target`` as torchmetrics takes them, on any device.
        A batch with a bad value records nothing (tce's named errors)."""
        if self.validate_args:
            self._check_tensors(preds, target)
        # One transfer per tensor: everything after this runs on the CPU.
        preds = preds.detach().cpu()
        target = target.detach().cpu()
        if self.task == "binary":
            preds, target = preds.reshape(-1), target.reshape(-1)
        else:
            classes = preds.shape[1]
            preds = torch.movedim(preds, 1, -1).reshape(-1, classes)
            target = target.reshape(-1)
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            preds, target = preds[keep], target[keep]
        if preds.dtype not in (torch.float32, torch.float64):
            # numpy has no bfloat16: half-precision inputs are read as float32 (exact).
            preds = preds.to(torch.float32)
        # torchmetrics' rule: a batch with any value outside [0, 1] holds logits.
        logits = preds.numel() > 0 and bool(((preds < 0) | (preds > 1)).any())
        if logits and self.convention == "torchmetrics":
            # torchmetrics' transform, in the input's dtype, for its numbers exactly.
            preds = preds.sigmoid() if self.task == "binary" else torch.softmax(preds, dim=1)
            logits = False
        elif logits and self.task == "binary":
            # The binary score is the probability of class 1 (not a top-label confidence),
            # which the core's logits path (top label of an N×K table) does not give: the
            # sigmoid in float64.
            preds = preds.to(torch.float64).sigmoid()
            logits = False
        scores, labels = preds.numpy(), target.numpy()
        states = self.states
        if self._one_bin:
            # Confidences of exactly 1.0 go to torchmetrics' extra bin (for a table, the
            # row's maximum is its top-label confidence).
            top = preds if preds.ndim == 1 else preds.amax(dim=1)
            one = (top == 1.0).numpy()
            if one.any():
                self._push(states[0], scores[~one], labels[~one], logits)
                self._push(states[1], scores[one], labels[one], logits)
                return
        self._push(states[0], scores, labels, logits)

    def _push(self, state, scores, labels, logits) -> None:
        if len(labels) == 0:
            return
        state.update(scores, labels, logits=logits)
        self._warn_if_sampled()

    def _warn_if_sampled(self) -> None:
        if not self._warned and self.sampled:
            self._warned = True
            warnings.warn(
                f"tce.torch.CalibrationError: more than capacity={self.capacity} samples on "
                f"this rank; the {self.binning} {self.estimator} estimate is now over a uniform "
                f"sample of {self.capacity} of them (reservoir, seed {self.seed}). Raise "
                "capacity, or pass on_full='error' to refuse instead.",
                UserWarning, stacklevel=4)

    def _check_tensors(self, preds, target) -> None:
        if not isinstance(preds, torch.Tensor) or not isinstance(target, torch.Tensor):
            raise TypeError("preds and target must be torch tensors")
        if not preds.is_floating_point():
            raise tce.UnsupportedDtype(
                f"preds must be a floating tensor of probabilities or logits, not {preds.dtype}")
        if target.is_floating_point() or target.is_complex():
            raise tce.UnsupportedDtype(f"target must be an integer tensor, not {target.dtype}")
        want = tuple(target.shape)
        if self.task == "binary":
            got = tuple(preds.shape)
        else:
            if preds.ndim < 2 or preds.shape[1] != self.num_classes:
                raise tce.ShapeMismatch(
                    f"multiclass preds must be (N, C, ...) with C = num_classes = "
                    f"{self.num_classes}, not {tuple(preds.shape)}")
            got = (preds.shape[0],) + tuple(preds.shape[2:])
        if got != want:
            raise tce.ShapeMismatch(f"preds {tuple(preds.shape)} and target {want} do not "
                                    f"match (task={self.task!r})")

    def estimate(self) -> "tce.Estimate":
        """tce's estimate of this rank's states (no sync): float64 value, samples, bins."""
        return self._estimate(self.states)

    def _estimate(self, states) -> "tce.Estimate":
        p = _NORMS[self.norm]
        main = states[0]
        if self._histogram:
            if self._one_bin:
                # torchmetrics' bin for confidences of 1.0: the second histogram's
                # non-empty bin after the first's bins.
                one = states[1]
                return main.mce(extra=one) if p is None else main.ece_bin(norm=p, extra=one)
            if self.estimator == "debiased":
                return main.ece_debias(norm=p)
            return main.mce() if p is None else main.ece_bin(norm=p)
        kw = dict(binning=self.binning, closure=self.closure, ties=self.ties)
        if self.estimator == "sweep":
            return main.ece_sweep(norm=p, **kw)
        if self.estimator == "debiased":
            return main.ece_debias(bins=self.n_bins, norm=p, **kw)
        if p is None:
            return main.mce(bins=self.n_bins, **kw)
        return main.ece_bin(bins=self.n_bins, norm=p, **kw)

    def compute(self) -> "torch.Tensor":
        """The calibration error over every rank's samples (after a sync), as a 0-dim
        float32 tensor on the metric's device."""
        return torch.tensor(self._estimate(self.states).value, dtype=torch.float32,
                            device=self.device)

    def reset(self) -> None:
        # forward() resets too (for the batch's own state), so the warning about sampling
        # stays given once per metric object.
        super().reset()
        self._states = None

    # -- states across copies, forward and ranks -------------------------------------------

    @property
    def metric_state(self) -> dict:
        # Copies: merge_state(other) merges other's states into its own, which must not
        # change other.
        state = dict(super().metric_state)
        state["_states"] = [copy.copy(s) for s in self.states]
        return state

    def _copy_state_dict(self) -> dict:
        # sync() caches this before merging the ranks' states, and unsync() puts it back,
        # so that updates after a compute go on from this rank's own state.
        cache = super()._copy_state_dict()
        cache["_states"] = [copy.copy(s) for s in self.states]
        return cache

    def _reduce_states(self, incoming_state: dict) -> None:
        # forward(): `incoming_state` is the global state before this batch and `self` the
        # batch's; the global one takes the batch in (for a reservoir, its generator goes
        # on rather than restarting from the seed).
        super()._reduce_states({k: v for k, v in incoming_state.items() if k != "_states"})
        if "_states" not in incoming_state:
            raise ValueError("the incoming state has no tce states")
        merged = [_merge(a, b) for a, b in zip(incoming_state["_states"], self.states)]
        self._states = merged
        self._warn_if_sampled()

    def _sync_dist(self, dist_sync_fn=gather_all_tensors, process_group=None) -> None:
        super()._sync_dist(dist_sync_fn, process_group)
        group = process_group or self.process_group
        device = _comm_device(group)
        merged = []
        for state in self.states:
            frame = torch.frombuffer(bytearray(state.to_bytes()), dtype=torch.uint8).to(device)
            # gather_all_tensors pads tensors of different lengths and trims them back.
            frames = dist_sync_fn(frame, group=group)
            decoded = [type(state).from_bytes(f.cpu().numpy().tobytes()) for f in frames]
            total = decoded[0]
            for other in decoded[1:]:
                total = _merge(total, other)
            merged.append(total)
        self._states = merged


def _rank() -> int:
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return 0


def _comm_device(group) -> "torch.device":
    # NCCL moves only CUDA tensors; gloo (and MPI) CPU ones.
    if torch.distributed.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _merge(a, b):
    """a merged with b, as a state (a may be changed). Buffers append into one with room
    for both: the merged sample count is at most the ranks' capacities together."""
    if isinstance(a, tce.SortedBuffer):
        both = tce.SortedBuffer(max(1, len(a) + len(b)))
        both.merge(a)
        both.merge(b)
        return both
    a.merge(b)
    return a

