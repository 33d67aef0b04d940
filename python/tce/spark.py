"""Calibration at fleet scale on Apache Spark: tce states built and merged by group.

Imported only when asked for (``import tce.spark``); it needs the extra
``tce-calibration[spark]`` (pyspark 4.0 or later, pyarrow). Two entry points, both
returning a DataFrame with one row per group (the columns: :data:`ESTIMATE_COLUMNS`):

- :func:`calibration_from_predictions`: a DataFrame of predictions (score and label
  columns, or class-probability/logit columns reduced to the top label by the core).
  Each partition builds, per group, an equal-width :class:`tce.Histogram` and a bounded,
  seeded :class:`tce.Reservoir` through Arrow batches (``mapInArrow``, the updates run on
  whole numpy arrays); the states travel as bytes in tce's portable format and each
  group's are decoded and merged (``groupBy().applyInArrow``). ECE_bin, ECE_debias and
  MCE over equal-width bins come from the merged histogram, exactly (the merge adds
  integer counts and fixed-point sums); equal-mass estimates and both sweeps come from
  the merged reservoir, and the ``em_source`` column says whether it held every sample
  (``all samples``: exact) or a uniform sample of them (``reservoir sample``).
- :func:`calibration_from_states`: a column of encoded states (bytes written by C
  devices' ``tce_*_encode`` or Python's ``to_bytes()``). Each group's states are decoded
  and merged the same way. A group's kind and shape (bins and closure, or capacity) are
  those of most of its states, whatever their order; bytes that do not decode, nulls,
  and states of another kind or shape are counted in ``invalid`` with the first
  message in ``first_error``: never dropped silently, never failing the job.

Both run in two steps: a partial state per (partition, group), then one merge per group
of the partials in partition order, so the shuffle carries one state per partition and
group instead of the rows (docs/spark.md measures it). Histogram results do not depend on
the partitioning; a merged reservoir is a uniform sample either way and the same for the
same input layout (merges run in partition order, then in row order within a partition).
:func:`partial_states` gives the first step's DataFrame and :func:`merge_partials` the
second, for a pipeline that stores the partials (a daily job, say).

:func:`by_group` gives ``tce.by_group``'s table (estimate, bootstrap interval, calibration
test, adjusted p-values) per group of a prediction log, from the same partial states:
each group's merged reservoir holds the samples the interval and the test need.
:func:`by_group_from_states` gives it per group of encoded device states, with what the
group's merged state allows (samples: the same; a histogram: the estimators over its
bins, the Clopper–Pearson box interval and Hosmer–Lemeshow over its bins).
"""

from __future__ import annotations

from typing import Iterable, Iterator, Optional, Sequence, Union

try:
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark import TaskContext
    from pyspark.sql import DataFrame
    from pyspark.sql import types as T
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tce.spark needs pyspark (4.0 or later) and pyarrow: "
        "pip install 'tce-calibration[spark]'"
    ) from e

import numpy as np

import tce

__all__ = [
    "ESTIMATE_COLUMNS",
    "by_group",
    "by_group_from_states",
    "calibration_from_predictions",
    "calibration_from_states",
    "decode_state",
    "merge_partials",
    "partial_states",
    "state_kind",
]

# The portable format's kinds (docs/monitoring.md, the frame's bytes 6..8).
_KINDS = {
    1: ("histogram", tce.Histogram),
    2: ("buffer", tce.SortedBuffer),
    3: ("reservoir", tce.Reservoir),
    4: ("window", tce.SlidingWindow),
    5: ("decaying_histogram", tce.DecayingHistogram),
}
_SAMPLE_KINDS = ("buffer", "reservoir", "window")

# Columns of the partial states (prefixed so that they never meet a group column).
_PART = "_tce_partition"
_KIND = "_tce_kind"
_STATE = "_tce_state"
_VALID = "_tce_states"
_INVALID = "_tce_invalid"
_ERROR = "_tce_error"
_PARTIAL_FIELDS = [
    T.StructField(_PART, T.IntegerType(), False),
    T.StructField(_KIND, T.StringType(), True),
    T.StructField(_STATE, T.BinaryType(), True),
    T.StructField(_VALID, T.LongType(), False),
    T.StructField(_INVALID, T.LongType(), False),
    T.StructField(_ERROR, T.StringType(), True),
]

#: The estimate columns of both entry points, after the group columns. ``ece_bin``,
#: ``ece_debias`` and ``mce`` use equal-width bins (``ew_source`` says from what: the
#: merged ``histogram``, exact; a ``decaying_histogram``; or the samples of a sample
#: state); the ``*_em`` columns and both sweeps (with their b*) come from samples:
#: ``em_source`` is ``all samples`` when the state held every sample the group saw
#: (exact), ``reservoir sample`` when it held a uniform sample of ``sample_n`` of the
#: ``n`` (``window``: a sliding window's most recent ``sample_n``), null when the group
#: has no samples (histograms only).
ESTIMATE_COLUMNS = [
    T.StructField("kind", T.StringType(), True),
    T.StructField("states", T.LongType(), False),
    T.StructField("invalid", T.LongType(), False),
    T.StructField("first_error", T.StringType(), True),
    T.StructField("n", T.LongType(), True),
    T.StructField("accuracy", T.DoubleType(), True),
    T.StructField("bins", T.IntegerType(), True),
    T.StructField("ece_bin", T.DoubleType(), True),
    T.StructField("ece_debias", T.DoubleType(), True),
    T.StructField("mce", T.DoubleType(), True),
    T.StructField("ew_source", T.StringType(), True),
    T.StructField("sample_n", T.LongType(), True),
    T.StructField("em_source", T.StringType(), True),
    T.StructField("ece_bin_em", T.DoubleType(), True),
    T.StructField("ece_debias_em", T.DoubleType(), True),
    T.StructField("mce_em", T.DoubleType(), True),
    T.StructField("ece_sweep_em", T.DoubleType(), True),
    T.StructField("sweep_bins_em", T.IntegerType(), True),
    T.StructField("ece_sweep_ew", T.DoubleType(), True),
    T.StructField("sweep_bins_ew", T.IntegerType(), True),
    T.StructField("estimate_error", T.StringType(), True),
]


def state_kind(data: bytes) -> Optional[str]:
    """The kind named in a frame's header (``histogram``, ``reservoir``, ...), or None
    when the bytes are too short or name no kind (nothing else is checked)."""
    if data is None or len(data) < 8:
        return None
    entry = _KINDS.get(int.from_bytes(bytes(data[6:8]), "little"))
    return entry[0] if entry else None


def decode_state(data: bytes):
    """Decodes a portable state of any kind into its class (``tce.Histogram``,
    ``tce.Reservoir``, ...); raises ``tce.DecodeError`` (naming the cause: truncated,
    corrupted, wrong version, ...) for bytes that are not a valid state."""
    if data is None:
        raise tce.DecodeError("the state is null")
    data = bytes(data)
    kind = int.from_bytes(data[6:8], "little") if len(data) >= 8 else 0
    # An unknown kind goes to Histogram.from_bytes, whose error names the real cause
    # (bad magic, truncation, an unknown kind).
    cls = _KINDS.get(kind, (None, tce.Histogram))[1]
    if cls is tce.SortedBuffer:
        return cls.from_bytes(data, capacity=None)
    return cls.from_bytes(data)


def _kind_of(state) -> str:
    for name, cls in _KINDS.values():
        if isinstance(state, cls):
            return name
    raise TypeError(f"not a tce state: {type(state).__name__}")


class _Merged:
    """A running merge of states of one merge class (:func:`_merge_class`), with the
    count of those that could not be taken and the first one's message."""

    def __init__(self):
        self.state = None
        self.states = 0
        self.invalid = 0
        self.error = None

    def refuse(self, count: int, message: str):
        self.invalid += count
        if self.error is None:
            self.error = message

    def add(self, state, count: int = 1):
        """Merges `state` (standing for `count` states already merged into it)."""
        if self.state is None:
            self.state, self.states = state, count
            return
        mine, theirs = _kind_of(self.state), _kind_of(state)
        if mine != theirs:
            self.refuse(count, f"a {theirs} state does not merge into the group's {mine} states")
            return
        if mine == "window":
            # A window merge pushes the other's samples after its own: it depends on an
            # order, and a Spark group has none.
            self.refuse(count, "window states merge in push order, and a group has no order: "
                               "only the group's first is taken")
            return
        try:
            if mine == "buffer":
                # Buffers append: one with room for both (at least one sample, so that
                # two empty buffers merge into an empty one).
                both = tce.SortedBuffer(max(1, len(self.state) + len(state)))
                both.merge(self.state)
                both.merge(state)
                self.state = both
            else:
                self.state.merge(state)
        except tce.Error as e:
            self.refuse(count, f"{type(e).__name__}: {e}")
            return
        self.states += count

    def add_bytes(self, data, count: int = 1):
        try:
            state = decode_state(data)
        except tce.Error as e:
            self.refuse(count, f"{type(e).__name__}: {e}")
            return
        self.add(state, count)


# Kinds in the order that breaks a tie between merge classes of as many states.
_KIND_ORDER = {name: i for i, (name, _) in enumerate(_KINDS.values())}


def _merge_class(state):
    """What two states must share to merge: the kind, and the shape the core's merge
    checks (a histogram's bins and closure, a reservoir's capacity; buffers append
    whatever their capacities; a decaying histogram's half-life is left to its merge,
    which compares the decay per push)."""
    kind = _kind_of(state)
    if kind in ("histogram", "decaying_histogram"):
        return kind, (state.bins, state.closure)
    if kind == "reservoir":
        return kind, (state.capacity,)
    return kind, ()


def _describe_class(key, states: int) -> str:
    kind, shape = key
    if kind in ("histogram", "decaying_histogram"):
        of = f" of {shape[0]} bins ({shape[1]}-closed)"
    elif kind == "reservoir":
        of = f" of capacity {shape[0]}"
    else:
        of = ""
    return f"{states} {kind} state{'s' if states != 1 else ''}{of}"


class _Group:
    """A group's states merged by merge class, so that which states count as invalid
    does not depend on the order they come in: the class with the most states is the
    group's (a tie goes to the kind first in the format's numbering, then the smaller
    shape), and every other class's states are invalid, reported as a mismatch."""

    def __init__(self):
        self.classes = {}
        self.invalid = 0
        self.error = None

    def refuse(self, count: int, message: Optional[str]):
        self.invalid += count
        if self.error is None:
            self.error = message

    def add(self, state, count: int = 1):
        self.classes.setdefault(_merge_class(state), _Merged()).add(state, count)

    def add_bytes(self, data, count: int = 1):
        try:
            state = decode_state(data)
        except tce.Error as e:
            self.refuse(count, f"{type(e).__name__}: {e}")
            return
        self.add(state, count)

    def merged(self) -> _Merged:
        """The group's merge: its class's, with every refusal counted (decoding first,
        then within the class, then the other classes, largest first)."""
        out = _Merged()
        out.refuse(self.invalid, self.error)
        if not self.classes:
            return out
        ranked = sorted(self.classes.items(),
                        key=lambda kv: (-kv[1].states, _KIND_ORDER[kv[0][0]], kv[0][1]))
        (key, chosen), others = ranked[0], ranked[1:]
        out.state, out.states = chosen.state, chosen.states
        if chosen.invalid:
            out.refuse(chosen.invalid, chosen.error)
        for other_key, other in others:
            verb = "does" if other.states == 1 else "do"
            out.refuse(other.states + other.invalid,
                       f"MergeMismatch: {_describe_class(other_key, other.states)} {verb} "
                       f"not merge with the group's {_describe_class(key, chosen.states)}")
        return out


def _sample_source(samples, held, seen):
    """What a sample state's estimates are over: every sample the group saw (exact), a
    reservoir's uniform sample of them, or a window's most recent ones."""
    if held == seen:
        return "all samples"
    return "window" if isinstance(samples, tce.SlidingWindow) else "reservoir sample"


def _estimates(histogram, samples, *, norm, bins, closure, ties, sweep_limit, max_bins):
    """The estimate columns of a group from its merged equal-width state (a Histogram or
    DecayingHistogram, or None) and its merged sample state (or None)."""
    row = {name: None for name in (f.name for f in ESTIMATE_COLUMNS)}
    try:
        if histogram is not None:
            row["ew_source"] = _kind_of(histogram)
            row["n"] = histogram.samples
            row["bins"] = histogram.bins
            if isinstance(histogram, tce.Histogram):
                rel = histogram.reliability_bins()
                if histogram.samples > 0:
                    row["accuracy"] = int(rel.hits.sum()) / histogram.samples
            if histogram.samples > 0:
                row["ece_bin"] = histogram.ece_bin(norm=norm).value
                row["ece_debias"] = histogram.ece_debias(norm=norm).value
                row["mce"] = histogram.mce().value
        if samples is not None:
            held = len(samples)
            seen = getattr(samples, "seen", held)
            row["sample_n"] = held
            if held > 0:
                row["em_source"] = _sample_source(samples, held, seen)
                em = dict(binning="equal_mass", bins=bins, ties=ties)
                row["ece_bin_em"] = samples.ece_bin(norm=norm, **em).value
                row["ece_debias_em"] = samples.ece_debias(norm=norm, **em).value
                row["mce_em"] = samples.mce(**em).value
                sweep = dict(norm=norm, closure=closure, ties=ties, sweep_limit=sweep_limit,
                             max_bins=max_bins)
                s = samples.ece_sweep(binning="equal_mass", **sweep)
                row["ece_sweep_em"], row["sweep_bins_em"] = s.value, s.bins
                s = samples.ece_sweep(binning="equal_width", **sweep)
                row["ece_sweep_ew"], row["sweep_bins_ew"] = s.value, s.bins
            if histogram is None:
                row["n"] = seen
                row["bins"] = bins
                row["ew_source"] = row["em_source"]
                if held > 0:
                    ew = dict(binning="equal_width", bins=bins, closure=closure)
                    row["ece_bin"] = samples.ece_bin(norm=norm, **ew).value
                    row["ece_debias"] = samples.ece_debias(norm=norm, **ew).value
                    row["mce"] = samples.mce(**ew).value
    except tce.Error as e:
        row["estimate_error"] = f"{type(e).__name__}: {e}"
    return row


def merge_partial_rows(rows: Iterable[dict], *, paired: bool, **options) -> dict:
    """One group's estimate columns from its partial states (dicts with the keys
    ``partition``, ``kind``, ``state``, ``states``, ``invalid``, ``error``), merged in
    partition order. `paired`: the partials of a prediction log, a histogram and a
    reservoir per partition, merged each with its own kind."""
    rows = sorted(rows, key=lambda r: r["partition"])
    invalid, first_error = 0, None
    merged = {}
    group = _Group()
    for r in rows:
        invalid += r["invalid"]
        if first_error is None and r["error"] is not None:
            first_error = r["error"]
        if r["state"] is None:
            continue
        if paired:
            merged.setdefault(r["kind"], _Merged()).add_bytes(r["state"], r["states"])
        else:
            group.add_bytes(r["state"], r["states"])
    if not paired:
        merged["state"] = group.merged()
    states = 0
    for m in merged.values():
        states += m.states
        invalid += m.invalid
        if first_error is None and m.error is not None:
            first_error = m.error
    histogram = samples = None
    for m in merged.values():
        if m.state is None:
            continue
        if _kind_of(m.state) in _SAMPLE_KINDS:
            samples = m.state
        else:
            histogram = m.state
    out = _estimates(histogram, samples, **options)
    if paired:
        out["kind"] = "+".join(k for k in ("histogram", "reservoir") if k in merged)
        states = max((m.states for m in merged.values()), default=0)
    else:
        state = merged.get("state")
        out["kind"] = _kind_of(state.state) if state and state.state is not None else None
    out.update(states=states, invalid=invalid, first_error=first_error)
    return out


def _options(norm, bins, closure, ties, sweep_limit, max_bins):
    # Checked here, on the driver, so that a bad option fails before any task runs.
    probe = tce.SortedBuffer(1)
    probe.update(np.array([0.5]), np.array([1]))
    probe.ece_bin(binning="equal_mass", bins=bins, norm=norm, ties=ties)
    probe.ece_sweep(binning="equal_width", norm=norm, closure=closure, ties=ties,
                    sweep_limit=sweep_limit, max_bins=max_bins)
    return dict(norm=norm, bins=bins, closure=closure, ties=ties, sweep_limit=sweep_limit,
                max_bins=max_bins)


def _group_fields(df: DataFrame, group_by: Sequence[str]):
    missing = [c for c in group_by if c not in df.columns]
    if missing:
        raise ValueError(f"group columns {missing} are not columns of the DataFrame "
                         f"({df.columns})")
    return [df.schema[c] for c in group_by]


def _groups(table: "pa.Table", group_by: Sequence[str]):
    """(key tuple, row indices) of each group in an Arrow table, found by Arrow's hash
    grouping (vectorised)."""
    if not group_by:
        yield (), None
        return
    index = pa.array(np.arange(table.num_rows, dtype=np.int64))
    grouped = table.select(list(group_by)).append_column("_tce_row", index)
    grouped = grouped.group_by(list(group_by), use_threads=False).aggregate(
        [("_tce_row", "list")])
    keys = [grouped.column(c).to_pylist() for c in group_by]
    rows = grouped.column("_tce_row_list")
    for i in range(grouped.num_rows):
        yield tuple(k[i] for k in keys), rows[i].values.to_numpy()


def _partial_batch(group_fields, entries, partition):
    """The partial states of one partition as an Arrow record batch; `entries` holds
    (key, kind, state bytes, valid, invalid, error)."""
    arrays = [
        pa.array([e[0][i] for e in entries], type=_arrow_type(f.dataType))
        for i, f in enumerate(group_fields)
    ]
    arrays += [
        pa.array([partition] * len(entries), type=pa.int32()),
        pa.array([e[1] for e in entries], type=pa.string()),
        pa.array([e[2] for e in entries], type=pa.binary()),
        pa.array([e[3] for e in entries], type=pa.int64()),
        pa.array([e[4] for e in entries], type=pa.int64()),
        pa.array([e[5] for e in entries], type=pa.string()),
    ]
    names = [f.name for f in group_fields] + [f.name for f in _PARTIAL_FIELDS]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _arrow_type(spark_type):
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(spark_type)


def _column(batch, name):
    col = batch.column(name)
    if col.null_count:
        raise ValueError(f"column {name!r} has {col.null_count} null values in a batch: "
                         "tce refuses them rather than drop rows silently")
    return col


def _class_table(batch, probs):
    """The N×K table of class outputs: from a list of K columns, or from one column of
    arrays (each of K values)."""
    if isinstance(probs, str):
        col = _column(batch, probs)
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False)
        if len(lengths) and (lengths.min() != lengths.max() or lengths.min() == 0):
            raise ValueError(f"column {probs!r} holds arrays of different lengths "
                             f"({lengths.min()} to {lengths.max()}); each row needs K values")
        flat = pc.list_flatten(col).to_numpy(zero_copy_only=False).astype(np.float64)
        return flat.reshape(len(col), -1 if len(col) else 1)
    return np.column_stack([
        _column(batch, c).to_numpy(zero_copy_only=False).astype(np.float64) for c in probs
    ])


def partial_states(
    df: DataFrame,
    group_by: Sequence[str] = (),
    *,
    score_col: str = "score",
    label_col: str = "label",
    probs: Union[None, str, Sequence[str]] = None,
    logits: bool = False,
    bins: int = 15,
    closure: str = "left",
    reservoir: Optional[int] = 10_000,
    seed: int = 0,
) -> DataFrame:
    """The first step of :func:`calibration_from_predictions`: per partition and group,
    a histogram and a reservoir, encoded (the columns: the group columns, then
    ``_tce_partition``, ``_tce_kind`` (``histogram`` or ``reservoir``), ``_tce_state``
    (the bytes), ``_tce_states``, ``_tce_invalid``, ``_tce_error``).

    `probs`: the class outputs instead of ``score_col`` (a list of K columns, or one
    array column), with ``label_col`` the true class id; `logits`: they are logits.
    `reservoir`: the capacity of each group's reservoir; partition p's is seeded with
    ``seed`` and p; None for none (the equal-width estimates only, and the smallest
    shuffle: one histogram per partition and group). A null score or label, or a bad value, fails the task with tce's
    error (named, with its index): predictions are never dropped silently.
    """
    group_by = list(group_by)
    group_fields = _group_fields(df, group_by)
    # Bad options fail here, on the driver.
    tce.Histogram(bins=bins, closure=closure)
    if reservoir is not None:
        tce.Reservoir(reservoir, seed=seed)
    inputs = [label_col] + ([probs] if isinstance(probs, str) else list(probs or [score_col]))
    for c in inputs:
        if c not in df.columns:
            raise ValueError(f"column {c!r} is not a column of the DataFrame ({df.columns})")
    selected = df.select(*group_by, *[c for c in inputs if c not in group_by])

    def build(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        partition = TaskContext.get().partitionId()
        part_seed = (seed + partition * 0x9E3779B97F4A7C15) % 2**64
        states = {}
        for batch in batches:
            if batch.num_rows == 0:
                continue
            labels = _column(batch, label_col).to_numpy(zero_copy_only=False)
            if probs is None:
                scores = _column(batch, score_col).to_numpy(zero_copy_only=False)
            else:
                scores = _class_table(batch, probs)
            table = pa.Table.from_batches([batch])
            for key, rows in _groups(table, group_by):
                if key not in states:
                    states[key] = [tce.Histogram(bins=bins, closure=closure)]
                    if reservoir is not None:
                        states[key].append(tce.Reservoir(reservoir, seed=part_seed))
                s, y = (scores, labels) if rows is None else (scores[rows], labels[rows])
                for state in states[key]:
                    state.update(s, y, logits=logits)
        entries = []
        for key, group_states in states.items():
            for kind, state in zip(("histogram", "reservoir"), group_states):
                entries.append((key, kind, state.to_bytes(), 1, 0, None))
        if entries:
            yield _partial_batch(group_fields, entries, partition)

    schema = T.StructType(group_fields + _PARTIAL_FIELDS)
    return selected.mapInArrow(build, schema)


def _encoded_partials(df: DataFrame, group_by: Sequence[str], state_col: str) -> DataFrame:
    """Per partition, group and merge class, the encoded states merged (in row order),
    with the count and first message of those that could not be."""
    group_by = list(group_by)
    group_fields = _group_fields(df, group_by)
    if state_col not in df.columns:
        raise ValueError(f"column {state_col!r} is not a column of the DataFrame")
    if not isinstance(df.schema[state_col].dataType, T.BinaryType):
        raise ValueError(f"column {state_col!r} is {df.schema[state_col].dataType}, "
                         "not binary (the encoded states)")
    selected = df.select(*group_by, state_col)

    def build(batches):
        partition = TaskContext.get().partitionId()
        groups = {}
        for batch in batches:
            table = pa.Table.from_batches([batch])
            data = table.column(state_col).to_pylist()
            for key, rows in _groups(table, group_by):
                g = groups.setdefault(key, _Group())
                for i in (range(len(data)) if rows is None else rows):
                    g.add_bytes(data[i])
        # One partial per merge class of a group (so that the group's class is chosen
        # over all its states, not partition by partition), and one for the bytes that
        # did not decode.
        entries = []
        for key, g in groups.items():
            for m in g.classes.values():
                entries.append((key, _kind_of(m.state), m.state.to_bytes(), m.states,
                                m.invalid, m.error))
            if g.invalid:
                entries.append((key, None, None, 0, g.invalid, g.error))
        if entries:
            yield _partial_batch(group_fields, entries, partition)

    return selected.mapInArrow(build, T.StructType(group_fields + _PARTIAL_FIELDS))


def merge_partials(
    partials: DataFrame,
    group_by: Sequence[str] = (),
    *,
    paired: bool = True,
    norm: float = 2.0,
    bins: int = 15,
    closure: str = "left",
    ties: str = "split",
    sweep_limit: str = "samples",
    max_bins: Optional[int] = None,
) -> DataFrame:
    """The second step: each group's partial states decoded and merged in partition
    order, and the estimates (one row per group: the group columns, then
    :data:`ESTIMATE_COLUMNS`). `paired`: the partials of :func:`partial_states`
    (a histogram and a reservoir each); False for those of encoded states."""
    group_by = list(group_by)
    group_fields = _group_fields(partials, group_by)
    options = _options(norm, bins, closure, ties, sweep_limit, max_bins)
    out_schema = T.StructType(group_fields + ESTIMATE_COLUMNS)
    arrow_schema = pa.schema([pa.field(f.name, _arrow_type(f.dataType)) for f in out_schema])

    def merge(table: "pa.Table") -> "pa.Table":
        rows = [
            dict(partition=p, kind=k, state=s, states=v, invalid=i, error=e)
            for p, k, s, v, i, e in zip(*(table.column(c).to_pylist() for c in
                                          (_PART, _KIND, _STATE, _VALID, _INVALID, _ERROR)))
        ]
        out = merge_partial_rows(rows, paired=paired, **options)
        for c in group_by:
            out[c] = table.column(c)[0].as_py() if table.num_rows else None
        return pa.Table.from_pylist([out], schema=arrow_schema)

    if group_by:
        return partials.groupBy(*group_by).applyInArrow(merge, out_schema)
    # No group columns: one group (applyInArrow needs a key, so a constant one).
    from pyspark.sql import functions as F

    keyed = partials.withColumn("_tce_all", F.lit(0))
    return keyed.groupBy("_tce_all").applyInArrow(merge, out_schema)


def calibration_from_predictions(
    df: DataFrame,
    group_by: Sequence[str] = (),
    *,
    score_col: str = "score",
    label_col: str = "label",
    probs: Union[None, str, Sequence[str]] = None,
    logits: bool = False,
    bins: int = 15,
    closure: str = "left",
    norm: float = 2.0,
    ties: str = "split",
    sweep_limit: str = "samples",
    max_bins: Optional[int] = None,
    reservoir: Optional[int] = 10_000,
    seed: int = 0,
) -> DataFrame:
    """Calibration estimates per group of a DataFrame of predictions.

    Input: a score column (top-label confidence in [0, 1]) and a 0/1 label column, or
    `probs` (K class-probability columns, or one array column; `logits=True` for
    logits) with `label_col` the true class id. `group_by`: the group columns (model
    version, device, day, ...; none for one group over everything). Output: one row per
    group, the group columns then :data:`ESTIMATE_COLUMNS`; ``ece_bin``, ``ece_debias``
    and ``mce`` (`bins` equal-width bins, `closure`) are exact, the equal-mass ones and
    the sweeps come from a reservoir of `reservoir` samples per group (``em_source``;
    ``reservoir=None``: none, those columns are null).
    """
    partials = partial_states(df, group_by, score_col=score_col, label_col=label_col,
                              probs=probs, logits=logits, bins=bins, closure=closure,
                              reservoir=reservoir, seed=seed)
    return merge_partials(partials, group_by, paired=True, norm=norm, bins=bins,
                          closure=closure, ties=ties, sweep_limit=sweep_limit,
                          max_bins=max_bins)


def calibration_from_states(
    df: DataFrame,
    group_by: Sequence[str] = (),
    *,
    state_col: str = "state",
    norm: float = 2.0,
    bins: int = 15,
    closure: str = "left",
    ties: str = "split",
    sweep_limit: str = "samples",
    max_bins: Optional[int] = None,
) -> DataFrame:
    """Calibration estimates per group of a column of encoded states (binary, tce's
    portable format, any kind). Each group's states are merged with the core's merges
    (histograms exactly; reservoirs into a uniform sample; buffers by appending; decaying
    histograms as if every stream ended together; windows merge in an order a group does
    not have, so a group takes its first). Invalid bytes,
    nulls and states that do not merge with the group's are counted in ``invalid`` with
    the first message in ``first_error``. `bins`, `closure`: the binning of sample states
    (a histogram's own bins are used for it); the other options are the estimators'.
    """
    partials = _encoded_partials(df, group_by, state_col)
    return merge_partials(partials, group_by, paired=False, norm=norm, bins=bins,
                          closure=closure, ties=ties, sweep_limit=sweep_limit,
                          max_bins=max_bins)


#: The columns :func:`by_group`'s groups come back with from the workers (the group
#: columns before them); the adjusted p-values are added on the driver.
_BY_GROUP_FIELDS = [
    T.StructField("sample_n", T.LongType(), True),
    T.StructField("source", T.StringType(), True),
    T.StructField("n", T.LongType(), True),
    T.StructField("hits", T.LongType(), True),
    T.StructField("estimate", T.DoubleType(), True),
    T.StructField("lower", T.DoubleType(), True),
    T.StructField("upper", T.DoubleType(), True),
    T.StructField("interval_kind", T.StringType(), True),
    T.StructField("statistic", T.StringType(), True),
    T.StructField("p_value", T.DoubleType(), True),
    T.StructField("flag", T.BooleanType(), False),
    T.StructField("reason", T.StringType(), True),
]


def by_group(
    df: DataFrame,
    group_by: Sequence[str],
    *,
    score_col: str = "score",
    label_col: str = "label",
    probs: Union[None, str, Sequence[str]] = None,
    logits: bool = False,
    estimator: str = "ece_sweep:equal_mass",
    bins: int = 15,
    norm: float = 2.0,
    max_bins: Optional[int] = None,
    paper_limit: bool = False,
    resamples: int = 1000,
    level: float = 0.95,
    test: bool = True,
    test_statistic: str = "auto",
    test_resamples: Optional[int] = None,
    test_power_simulations: Optional[int] = None,
    alpha: float = 0.05,
    p_adjust: Optional[str] = "holm",
    min_samples: int = 30,
    reservoir: int = 10_000,
    seed: int = 0,
):
    """``tce.by_group`` on a Spark DataFrame of predictions: a pandas DataFrame on the
    driver, one row per group (sorted by key), with ``tce.by_group``'s columns and two
    more: ``sample_n``, the samples the estimate, interval and test are computed on, and
    ``source``, ``all samples`` (the group's merged reservoir held every row: the row
    is ``tce.by_group``'s on those rows) or ``reservoir sample`` (a uniform sample of
    ``sample_n`` of the group's ``n`` rows: an estimate, interval and test of that
    sample, valid for it, with the width and power of ``sample_n`` rows). ``n`` is the
    group's row count (exact, from its histogram), ``hits`` and the flags count the
    samples. The groups are computed in the workers (``groupBy().applyInArrow``, as
    :func:`merge_partials`); only their rows come to the driver, which adjusts the
    p-values over the groups (``p_adjust``, the family as in ``tce.by_group``).

    Inputs and ``reservoir``/``seed`` as :func:`calibration_from_predictions` (the
    reservoir is required: a histogram holds no samples to resample); the estimator, the
    bootstrap and the test as ``tce.by_group``. The samples come out of the reservoir
    sorted by score (equal scores in arrival order), so with distinct scores an
    ``all samples`` row equals ``tce.by_group`` over the group's rows in score order,
    bit for bit; the bootstrap interval does not depend on the order of distinct
    scores, while the test's resampled labels do (the same test, other draws).
    """
    from ._groups import _options, _pandas, finish, group_row

    pd = _pandas()
    group_by = list(group_by)
    if not group_by:
        raise ValueError("by_group needs at least one group column")
    if reservoir is None:
        raise tce.InvalidOption("by_group needs a reservoir: the bootstrap and the test "
                                "resample samples, which a histogram does not hold")
    # Checked on the driver, before any task runs. The reservoir holds top-label samples,
    # so the group computations read confidences (logits only reach the first step).
    options = _options(estimator=estimator, bins=bins, norm=norm, max_bins=max_bins,
                       paper_limit=paper_limit, resamples=resamples, level=level, test=test,
                       test_statistic=test_statistic, test_resamples=test_resamples,
                       test_power_simulations=test_power_simulations, alpha=alpha,
                       p_adjust=p_adjust, min_samples=min_samples, seed=seed, logits=False)
    partials = partial_states(df, group_by, score_col=score_col, label_col=label_col,
                              probs=probs, logits=logits, bins=bins, reservoir=reservoir,
                              seed=seed)
    group_fields = _group_fields(partials, group_by)
    out_schema = T.StructType(group_fields + _BY_GROUP_FIELDS)
    arrow_schema = pa.schema([pa.field(f.name, _arrow_type(f.dataType)) for f in out_schema])

    def compute(table: "pa.Table") -> "pa.Table":
        merged = {}
        order = np.argsort(table.column(_PART).to_numpy(), kind="stable")
        kinds = table.column(_KIND).to_pylist()
        states = table.column(_STATE).to_pylist()
        for i in order:
            merged.setdefault(kinds[i], _Merged()).add_bytes(states[i])
        histogram, samples = merged["histogram"].state, merged["reservoir"].state
        for m in merged.values():
            if m.invalid:  # partials written by partial_states always decode
                raise tce.DecodeError(m.error)
        s, y = samples.samples()
        row = group_row(s, y, options)
        row["sample_n"] = row.pop("n")
        row["source"] = _sample_source(samples, len(samples), samples.seen)
        row["n"] = histogram.samples
        for c in group_by:
            row[c] = table.column(c)[0].as_py()
        return pa.Table.from_pylist([row], schema=arrow_schema)

    rows = partials.groupBy(*group_by).applyInArrow(compute, out_schema).toArrow()
    rows = rows.sort_by([(c, "ascending") for c in group_by]).to_pylist()
    extra = ("sample_n", "source")
    return finish(pd, rows, group_by, options, extra=extra)


#: The columns :func:`by_group_from_states`'s groups come back with from the workers
#: (the group columns before them).
_STATES_BY_GROUP_FIELDS = [
    T.StructField("kind", T.StringType(), True),
    T.StructField("states", T.LongType(), False),
    T.StructField("invalid", T.LongType(), False),
    T.StructField("first_error", T.StringType(), True),
    T.StructField("sample_n", T.LongType(), True),
    T.StructField("source", T.StringType(), True),
    T.StructField("allows", T.StringType(), True),
] + [f for f in _BY_GROUP_FIELDS if f.name not in ("sample_n", "source")]


def by_group_from_states(
    df: DataFrame,
    group_by: Sequence[str],
    *,
    state_col: str = "state",
    estimator: str = "ece_sweep:equal_mass",
    bins: int = 15,
    norm: float = 2.0,
    max_bins: Optional[int] = None,
    paper_limit: bool = False,
    resamples: int = 1000,
    level: float = 0.95,
    test: bool = True,
    test_statistic: str = "auto",
    test_resamples: Optional[int] = None,
    test_power_simulations: Optional[int] = None,
    alpha: float = 0.05,
    p_adjust: Optional[str] = "holm",
    min_samples: int = 30,
    seed: int = 0,
):
    """``tce.by_group``'s table from a column of encoded device states (as
    :func:`calibration_from_states` takes them): a pandas DataFrame on the driver, one
    row per group (sorted by key). Each group's states are merged as
    :func:`calibration_from_states` merges them (``kind``, ``states``, ``invalid``,
    ``first_error`` as there), and its row is what the merged state allows (the
    ``allows`` column says it):

    - a **sorted buffer, reservoir or window** holds samples: the row is
      ``tce.by_group``'s over them (``source``: ``all samples``, ``reservoir sample`` or
      ``window``; ``sample_n`` of the ``n`` samples the devices saw);
    - a **histogram** holds per-bin counts, hits and score sums (``source``:
      ``histogram bins``): ``estimator`` must be ``ece_bin:equal_width``,
      ``ece_debias:equal_width`` or ``mce:equal_width`` (over the histogram's own bins),
      the interval is the Clopper–Pearson box (``interval_kind``
      ``clopper_pearson_box``: coverage ≥ ``level`` of the binned calibration error for
      any n, ``tce.Histogram.binned_interval``) and the test Hosmer–Lemeshow over its bins
      (``hosmer_lemeshow:equal_width``, with ``test_statistic`` ``"auto"`` or
      ``"hosmer_lemeshow"``); any other estimator or test is refused, flagged with the
      reason;
    - a **decaying histogram** holds decayed weights: the estimate only, flagged.

    A group with no valid state is flagged. The adjustment is on the driver, over the
    unflagged groups, as ``tce.by_group``.
    """
    from ._groups import _options, _pandas, finish, state_row

    pd = _pandas()
    group_by = list(group_by)
    if not group_by:
        raise ValueError("by_group_from_states needs at least one group column")
    options = _options(estimator=estimator, bins=bins, norm=norm, max_bins=max_bins,
                       paper_limit=paper_limit, resamples=resamples, level=level, test=test,
                       test_statistic=test_statistic, test_resamples=test_resamples,
                       test_power_simulations=test_power_simulations, alpha=alpha,
                       p_adjust=p_adjust, min_samples=min_samples, seed=seed, logits=False)
    partials = _encoded_partials(df, group_by, state_col)
    group_fields = _group_fields(partials, group_by)
    out_schema = T.StructType(group_fields + _STATES_BY_GROUP_FIELDS)
    arrow_schema = pa.schema([pa.field(f.name, _arrow_type(f.dataType)) for f in out_schema])

    def compute(table: "pa.Table") -> "pa.Table":
        merged = _merged_encoded(table)
        row = dict(kind=None, states=merged.states, invalid=merged.invalid,
                   first_error=merged.error)
        if merged.state is None:
            row.update(n=None, hits=None, flag=True, sample_n=None,
                       reason=f"no valid state: {merged.error}")
        else:
            state = merged.state
            row.update(state_row(state, options))
            row["kind"] = _kind_of(state)
            if row["kind"] in _SAMPLE_KINDS:
                row["source"] = _sample_source(state, len(state), row["n"])
            else:
                row["source"] = "histogram bins"
        for c in group_by:
            row[c] = table.column(c)[0].as_py()
        return pa.Table.from_pylist([row], schema=arrow_schema)

    rows = partials.groupBy(*group_by).applyInArrow(compute, out_schema).toArrow()
    rows = rows.sort_by([(c, "ascending") for c in group_by]).to_pylist()
    extra = ("kind", "states", "invalid", "first_error", "sample_n", "source", "allows")
    return finish(pd, rows, group_by, options, extra=extra)


def _merged_encoded(table: "pa.Table") -> _Merged:
    """A group's partials of encoded states (:func:`_encoded_partials`) merged in
    partition order: its state, with every refusal counted."""
    order = np.argsort(table.column(_PART).to_numpy(), kind="stable")
    columns = [table.column(c).to_pylist() for c in (_STATE, _VALID, _INVALID, _ERROR)]
    group = _Group()
    invalid, error = 0, None
    for i in order:
        state, valid, bad, message = (c[i] for c in columns)
        invalid += bad
        if error is None:
            error = message
        if state is not None:
            group.add_bytes(state, valid)
    merged = group.merged()
    out = _Merged()
    out.refuse(invalid, error)
    out.refuse(merged.invalid, merged.error)
    out.state, out.states = merged.state, merged.states
    return out
