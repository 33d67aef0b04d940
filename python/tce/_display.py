"""The notebook views of the result classes: ``Report._repr_html_``,
``CalibrationTest._repr_html_`` and ``Comparison._repr_html_`` (methods of the Rust
classes) call these functions, which lay out in HTML the numbers the objects hold. Nothing
is computed here; numbers are written with 6 significant digits (``num``).
"""

from html import escape


def num(x) -> str:
    """A number as the views write it (6 significant digits); "–" for None or NaN."""
    if x is None or x != x:
        return "–"
    if isinstance(x, bool):
        return str(x)
    return f"{x:.6g}"


def _interval(i) -> str:
    return "–" if i is None else f"[{num(i[0])}, {num(i[1])}]"


def _table(header, rows) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def report_html(r) -> str:
    """The report: the recommendation, every estimator with its interval, and the test."""
    words = r.words or []
    parts = [
        f"<div><strong>tce.Report</strong> n = {r.n}: <strong>{escape(str(r.estimator))}"
        f" = {num(r.estimate)}</strong>"
        + ("" if r.interval is None
           else f" {_interval(r.interval)} ({escape(str(r.interval_kind))})")
        + f", basis {escape(str(r.basis))}</div>",
    ]
    if words:
        parts.append(f"<p>{escape(words[0])}</p>")
    rows = []
    for e in r.estimators:
        boot = e.get("bootstrap") or {}
        interval = boot.get("bca") or boot.get("percentile")
        kind = "bca" if boot.get("bca") else ("percentile" if interval else "–")
        rows.append((e["name"], num(e["value"]),
                     _interval(None if interval is None
                               else (interval["lower"], interval["upper"])), kind))
    parts.append(_table(("estimator", "value", "interval", "kind"), rows))
    test = r.calibration_test
    if test:
        parts.append(
            f"<p>Calibration test: {escape(str(test.get('statistic')))}, "
            f"p = {num(test.get('p_value'))}, reject at α = {num(test.get('alpha'))}: "
            f"{test.get('reject')}</p>")
    return "<div class='tce-report'>" + "".join(parts) + "</div>"


def test_html(t) -> str:
    """The calibration test: the decision, then every statistic's p-value."""
    head = (f"<div><strong>tce.CalibrationTest</strong> n = {t.n}: "
            f"<strong>{escape(t.statistic)}</strong> p = {num(t.p_value)}, "
            f"reject at α = {num(t.alpha)}: {t.reject} (basis {escape(str(t.basis))})</div>")
    rows = [(name, num(p)) for name, p in t.p_values.items()]
    return ("<div class='tce-test'>" + head + _table(("statistic", "p-value"), rows)
            + "</div>")


def comparison_html(c) -> str:
    """The comparison of two models: each estimate, Δ with its interval, the decision."""
    rows = [
        ("CE_A", num(c.estimate_a)),
        ("CE_B", num(c.estimate_b)),
        ("Δ = CE_A − CE_B", num(c.delta)),
        (f"interval ({c.method})", _interval(c.interval)),
        ("p-value", num(c.p_value)),
        ("reject", str(c.reject)),
        ("better", str(c.better)),
    ]
    return (f"<div class='tce-comparison'><div><strong>tce.Comparison</strong> "
            f"{escape(c.statistic)}, n = {c.n}</div>"
            + _table(("", ""), rows) + "</div>")
