"""``aqmlab theory``: the analytic models on the command line.

Subcommands: ``dropfn`` (the dropping-function queue of seed 002), ``fluid`` (the TCP/AQM fluid
model of seed 001) and ``routh`` (a Routh-Hurwitz table). :func:`register` adds them to the main
CLI; every subcommand's ``func`` takes the argparse namespace and returns an exit code. Bad input
raises :class:`aqmlab.errors.InputError`, which the main CLI prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

import numpy as np

from aqmlab.errors import InputError
from aqmlab.theory import dropfn as dq
from aqmlab.theory import fluid as fl
from aqmlab.theory.families import FAMILIES, get_family, validate_table
from aqmlab.theory.routh import parse_coefficients, routh

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``theory`` command (with ``dropfn``, ``fluid``, ``routh``) to ``subparsers``."""
    theory = subparsers.add_parser(
        "theory",
        help="analytic models: dropping-function queue, TCP/AQM fluid model, Routh-Hurwitz",
        description="Analytic models. See docs/theory.md for the formulas and their sources.",
    )
    sub = theory.add_subparsers(dest="theory_command", metavar="{dropfn,fluid,routh}")
    sub.required = True
    _add_dropfn(sub)
    _add_fluid(sub)
    _add_routh(sub)
    return theory


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def _print_rows(rows: Sequence[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k.ljust(width)}  {v}")


def _poly_str(c: np.ndarray, var: str = "s") -> str:
    n = len(c) - 1
    terms = []
    for i, a in enumerate(c):
        p = n - i
        if a == 0:
            continue
        mag = f"{abs(a):.6g}"
        if p > 0 and mag == "1":
            mag = ""
        v = "" if p == 0 else (var if p == 1 else f"{var}^{p}")
        body = f"{mag} {v}".strip() if mag and v else (mag or v)
        sign = "-" if a < 0 else "+"
        terms.append((sign, body))
    if not terms:
        return "0"
    first = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    return " ".join([first] + [f"{s} {b}" for s, b in terms[1:]])


def _save(fig: object, path: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)  # type: ignore[arg-type]
    try:
        fig.savefig(path, dpi=110)  # type: ignore[attr-defined]
    except (OSError, ValueError) as exc:
        raise InputError(f"plot: cannot write {path!r} ({exc})") from None


def _check_plot_path(path: str | None) -> None:
    if path is not None and not path.lower().endswith((".png", ".svg", ".pdf")):
        raise InputError(f"plot: the file name must end in .png, .svg or .pdf (got {path!r})")


# ----------------------------------------------------------------------------------------------
# dropfn
# ----------------------------------------------------------------------------------------------


def _add_dropfn(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dropfn",
        help="queue with a dropping function (seed 002 Theorem 1)",
        description=(
            "M/M/1 (or M/M/1/K) queue where an arrival finding n packets in the system is dropped "
            "with probability d(n). Prints the stationary figures. Families: "
            + ", ".join(FAMILIES)
            + "; 'all' calibrates every family to --target-mean."
        ),
    )
    p.add_argument("family", nargs="?", help="dropping-function family, or 'all'")
    p.add_argument("--scale", type=float, help="the family's scale parameter")
    p.add_argument(
        "--target-mean",
        type=float,
        help="calibrate the scale so that the mean number in the system is this (seed 002: 50)",
    )
    p.add_argument("--load", type=float, default=1.0, help="rho = lambda/mu (default 1)")
    p.add_argument(
        "--buffer",
        default="inf",
        help="system capacity K in packets, the one in service included, or 'inf' (default)",
    )
    p.add_argument("--table", help="a dropping function as comma-separated d(0),d(1),...")
    p.add_argument(
        "--service-rate", type=float, default=1.0, help="mu, packets per time unit (default 1)"
    )
    p.add_argument("--plot", metavar="FILE.png", help="draw d(n) and the stationary distribution")
    p.set_defaults(func=_cmd_dropfn)


def _cmd_dropfn(args: argparse.Namespace) -> int:
    _check_plot_path(args.plot)
    if args.family is not None and args.family == "all":
        return _cmd_dropfn_all(args)
    if args.table is not None:
        if args.family is not None:
            raise InputError("table: give either a family or --table, not both")
        try:
            vals = [float(x) for x in args.table.replace(",", " ").split()]
        except ValueError:
            raise InputError(
                f"table: must be comma-separated numbers (got {args.table!r})"
            ) from None
        spec: object = validate_table(vals)
        scale = None
    else:
        if args.family is None:
            raise InputError(f"family: required, one of {', '.join(FAMILIES)}, 'all' (or --table)")
        fam = get_family(args.family)
        spec = fam.name
        if args.target_mean is not None:
            if args.scale is not None:
                raise InputError("scale: give either --scale or --target-mean, not both")
            scale = dq.calibrate(fam.name, args.target_mean, args.load, args.buffer)
        elif args.scale is None:
            raise InputError(f"scale: required for family '{fam.name}' ({fam.scale_meaning})")
        else:
            scale = fam.check_scale(args.scale)
    res = dq.analyze(spec, args.load, args.buffer, scale=scale, service_rate=args.service_rate)
    print("Dropping-function queue (seed 002, Theorem 1): Poisson arrivals, exponential service")
    if args.target_mean is not None and args.table is None:
        print(
            f"calibrated scale: {scale:.10g} (mean number in system {args.target_mean:g} at load "
            f"{args.load:g})"
        )
    if res.buffer is None:
        st = dq.stability(spec, args.load, scale=scale)
        print(f"stability (infinite buffer): {'stable' if st.stable else 'unstable'}: {st.reason}")
    _print_rows(res.rows())
    print(
        f"  (service rate mu = {res.service_rate:g} packets per time unit; rates and times in "
        "that unit)"
    )
    if args.plot:
        _plot_dropfn(res, spec, scale, args.plot)
        print(f"plot written to {args.plot}")
    return 0


def _cmd_dropfn_all(args: argparse.Namespace) -> int:
    if args.target_mean is None:
        raise InputError("target_mean: required with family 'all'")
    if args.plot:
        raise InputError("plot: not available with family 'all'")
    print(
        f"Every family calibrated to a mean of {args.target_mean:g} packets in the system at load "
        f"{args.load:g}, buffer {args.buffer}"
    )
    head = f"  {'family':<14} {'seed002':<14} {'scale':>12} {'mean':>9} {'std':>9} {'loss':>10}"
    print(head + f" {'burst':>8}")
    for name in FAMILIES:
        s = dq.calibrate(name, args.target_mean, args.load, args.buffer)
        r = dq.analyze(name, args.load, args.buffer, scale=s)
        print(
            f"  {name:<14} {FAMILIES[name].seed002:<14} {s:>12.6g} {r.mean_system:>9.4f} "
            f"{r.std_system:>9.4f} {r.loss_ratio:>10.6f} {r.burst_ratio:>8.4f}"
        )
    return 0


def _plot_dropfn(res: dq.QueueResult, spec: object, scale: float | None, path: str) -> None:
    from matplotlib.figure import Figure

    pi = res.distribution
    cum = np.cumsum(pi)
    n_show = int(min(len(pi), np.searchsorted(cum, 1 - 1e-5) + 2))
    n_show = max(n_show, 2)
    n = np.arange(n_show)
    df = dq.as_dropfunction(spec, scale, n_max=res.buffer)  # type: ignore[arg-type]
    dv = df.at(n_show)
    if res.buffer is not None and res.buffer < n_show:
        dv[res.buffer :] = 1.0
    fig = Figure(figsize=(8, 6))
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    ax1.step(n, dv, where="post", color="tab:red")
    ax1.set_ylabel("d(n)")
    ax1.set_ylim(-0.02, 1.02)
    ax1.set_title(f"{res.dropfn}, load {res.load:g}, buffer {res.buffer or 'infinite'}")
    ax1.grid(alpha=0.3)
    ax2.bar(n, pi[:n_show], width=1.0, color="tab:blue")
    ax2.axvline(res.mean_system, color="k", ls="--", lw=1, label=f"mean {res.mean_system:.3g}")
    ax2.set_xlabel("n (packets in the system)")
    ax2.set_ylabel("P(N = n)")
    ax2.legend()
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)


# ----------------------------------------------------------------------------------------------
# fluid
# ----------------------------------------------------------------------------------------------


def _add_fluid(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fluid",
        help="TCP/AQM fluid model: equilibrium, linearisation, Routh, margins, integration",
        description=(
            "Misra-Gong-Towsley fluid model (seed 001 Eqs 4-6) closed by an AQM law. Defaults are "
            "seed 001's single-bottleneck setup (250 flows, 2500 packets/s, 80 ms propagation "
            "RTT, 600-packet buffer, target 200 packets)."
        ),
    )
    g = p.add_argument_group("network")
    g.add_argument("--flows", type=float, default=250, help="N, number of TCP flows (250)")
    g.add_argument("--capacity", type=float, default=2500, help="C, packets/s (2500)")
    g.add_argument("--rtt", type=float, default=0.08, help="Tp, propagation RTT, s (0.08)")
    g.add_argument("--buffer", type=float, default=600, help="B, packets (600)")
    a = p.add_argument_group("AQM law")
    a.add_argument("--aqm", default="laq", help="red, pi, rem, laq or dropfn (laq)")
    a.add_argument("--q-ref", type=float, help="target queue, packets (pi/laq 200, rem 20)")
    a.add_argument("--min-th", type=float, default=100.0, help="RED min_th (100)")
    a.add_argument("--max-th", type=float, default=300.0, help="RED max_th (300)")
    a.add_argument("--max-p", type=float, default=0.1, help="RED max_p (0.1)")
    a.add_argument("--wq", type=float, default=0.002, help="RED EWMA weight (0.002)")
    a.add_argument("--no-gentle", action="store_true", help="RED without the gentle ramp")
    a.add_argument("--pi-a", type=float, default=1.822e-5, help="PI a (1.822e-5)")
    a.add_argument("--pi-b", type=float, default=1.816e-5, help="PI b (1.816e-5)")
    a.add_argument(
        "--pi-design",
        action="store_true",
        help="design a, b by Hollot et al.'s rule for these N, C and the RTT at q_ref",
    )
    a.add_argument("--omega-g", type=float, help="PI design crossover, rad/s (default: the zero z)")
    a.add_argument("--sampling-hz", type=float, default=170.0, help="PI/LaQ sampling (170)")
    a.add_argument("--rem-gamma", type=float, default=0.001, help="REM gamma (0.001)")
    a.add_argument("--rem-alpha", type=float, default=1.0, help="REM alpha (1)")
    a.add_argument("--rem-phi", type=float, default=1.001, help="REM phi (1.001)")
    a.add_argument("--rem-interval", type=float, default=0.002, help="REM update time, s")
    a.add_argument("--gamma", type=float, default=0.05, help="LaQ gamma per packet (0.05)")
    a.add_argument("--laq-form", default="paper", help="LaQ: 'paper' (Eq 6) or 'algorithm'")
    a.add_argument("--w-m", type=float, default=0.1, help="LaQ w_m (0.1)")
    a.add_argument("--laq-m", type=int, default=10, help="LaQ M (10)")
    a.add_argument("--family", default="linear", help="dropfn family (linear)")
    a.add_argument("--scale", type=float, help="dropfn family scale")
    a.add_argument("--table", help="dropfn as comma-separated d(0),d(1),...")
    m = p.add_argument_group("analysis")
    m.add_argument(
        "--delay",
        default="pade1",
        help="approximation of e^{-sR}: " + ", ".join(fl.DELAY_APPROXIMATIONS) + " (pade1)",
    )
    m.add_argument(
        "--r0",
        default="equilibrium",
        help="RTT of the linearisation: 'equilibrium' (q0/C + Tp) or 'propagation' (Tp, as "
        "seed 001 Example 1)",
    )
    m.add_argument("--duration", type=float, default=100.0, help="integration time, s (100)")
    m.add_argument("--dt", type=float, help="integration step, s (automatic)")
    m.add_argument("--no-sim", action="store_true", help="skip the integration")
    m.add_argument("--plot", metavar="FILE.png", help="draw q(t), W(t), p(t)")
    p.set_defaults(func=_cmd_fluid)


def _law(args: argparse.Namespace, net: fl.Network) -> tuple[fl.Law, fl.PiDesign | None]:
    name = str(args.aqm).lower()
    qr = args.q_ref
    if name == "red":
        return fl.Red(args.min_th, args.max_th, args.max_p, args.wq, not args.no_gentle), None
    if name == "pi":
        q = 200.0 if qr is None else qr
        if args.pi_design:
            design = fl.pi_design(
                net.n_flows,
                net.capacity,
                net.rtt_at(max(q, 0.0)),
                args.sampling_hz,
                omega_g=args.omega_g,
            )
            return design.law(q), design
        return fl.Pi(args.pi_a, args.pi_b, q, args.sampling_hz), None
    if name == "rem":
        q = 20.0 if qr is None else qr
        return fl.Rem(args.rem_gamma, args.rem_alpha, args.rem_phi, q, args.rem_interval), None
    if name == "laq":
        q = 200.0 if qr is None else qr
        return fl.Laq(args.gamma, q, args.laq_form, args.w_m, args.laq_m, args.sampling_hz), None
    if name == "dropfn":
        if args.table is not None:
            try:
                vals = tuple(float(x) for x in args.table.replace(",", " ").split())
            except ValueError:
                raise InputError(
                    f"table: must be comma-separated numbers (got {args.table!r})"
                ) from None
            return fl.DropFn(None, None, vals), None
        return fl.DropFn(args.family, args.scale), None
    raise InputError(f"aqm: must be one of red, pi, rem, laq, dropfn (got {args.aqm!r})")


def _law_str(law: fl.Law) -> str:
    if isinstance(law, fl.Red):
        return (
            f"RED min_th={law.min_th:g} max_th={law.max_th:g} max_p={law.max_p:g} "
            f"w_q={law.w_q:g} gentle={'on' if law.gentle else 'off'}"
        )
    if isinstance(law, fl.Pi):
        return (
            f"PI a={law.a:.6g} b={law.b:.6g} q_ref={law.q_ref:g} f_s={law.sampling_hz:g} Hz "
            f"(K_PI={law.k_pi:.4g}, z={law.z:.4g} rad/s)"
        )
    if isinstance(law, fl.Rem):
        return (
            f"REM gamma={law.gamma:g} alpha={law.alpha:g} phi={law.phi:g} q_ref={law.q_ref:g} "
            f"T={law.interval:g} s"
        )
    if isinstance(law, fl.Laq):
        extra = (
            ""
            if law.form == "paper"
            else f" w_m={law.w_m:g} M={law.m} f_s={law.sampling_hz:g} Hz (tau={law.tau:.4g} s)"
        )
        return f"LaQ ({law.form} form) gamma={law.gamma:g} Q_ref={law.q_ref:g}{extra}"
    if law.table is not None:
        return f"dropping function: table of {len(law.table)} values"
    return f"dropping function {law.family}(scale={law.scale:g})"


def _fmt(x: float, unit: str = "") -> str:
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    if isinstance(x, float) and math.isnan(x):
        return "n/a"
    return f"{x:.6g}{unit}"


def _cmd_fluid(args: argparse.Namespace) -> int:
    _check_plot_path(args.plot)
    net = fl.Network(args.flows, args.capacity, args.rtt, args.buffer)
    law, design = _law(args, net)
    lin = fl.linearize(net, law, delay=args.delay, r0=args.r0)
    eq = lin.equilibrium
    print("TCP/AQM fluid model (Misra, Gong & Towsley 2000; seed 001 Eqs 4-6)")
    print(
        f"network: N={net.n_flows:g} flows, C={net.capacity:g} packets/s, Tp={net.rtt:g} s, "
        f"B={net.buffer:g} packets"
    )
    print(f"AQM: {_law_str(law)}")
    if design is not None:
        r_plus = net.rtt_at(law.q_ref)  # type: ignore[union-attr]
        print(
            f"PI design (Hollot et al. 2002) for N-={net.n_flows:g}, R+={r_plus:g} s: "
            f"z={design.z:.6g} rad/s, omega_g={design.omega_g:.6g} rad/s, K_PI={design.k_pi:.6g}, "
            f"a={design.a:.6g}, b={design.b:.6g}"
        )
        if not design.premise_ok and args.omega_g is None:
            print(
                f"  note: z R+ = {design.z * r_plus:.3g} >= 0.5: the TCP pole is not well below "
                "1/R+ as the rule assumes; consider a smaller --omega-g"
            )
    print("equilibrium:")
    rows = [
        ("q0 [packets]", _fmt(eq.q0)),
        ("W0 = R0 C / N [packets]", _fmt(eq.w0)),
        ("p0 = 2 / W0^2", _fmt(eq.p0)),
        ("R0 = q0/C + Tp [s]", _fmt(eq.r0)),
    ]
    if eq.note:
        rows.append(("note", eq.note))
    _print_rows(rows)
    print(f"linearisation at R = {lin.rtt:g} s ({args.r0}), e^(-sR) ~ {lin.delay}:")
    a_, b_ = lin.plant_poles
    _print_rows(
        [
            ("plant P(s)", f"{lin.plant_gain:.6g} e^(-sR) / ((s + {a_:.6g})(s + {b_:.6g}))"),
            (
                "controller C(s)",
                f"({_poly_str(lin.controller_num)}) / ({_poly_str(lin.controller_den)})",
            ),
            ("characteristic polynomial", _poly_str(lin.char_poly)),
            ("coefficients", ", ".join(f"{c:.10g}" for c in lin.char_poly)),
        ]
    )
    print("Routh table:")
    for line in lin.routh.format().splitlines():
        print(f"  {line}")
    print(
        f"  numpy.roots cross-check: largest real part {float(np.max(lin.roots.real)):.6g} "
        f"({int(np.sum(lin.roots.real > 0))} in the right half-plane)"
    )
    mg = lin.margins
    print("open-loop margins (exact delay):")
    rows = [
        (
            "gain margin",
            f"{_fmt(mg.gain_margin)} ({_fmt(mg.gain_margin_db, ' dB')}) at "
            f"{_fmt(mg.phase_crossover, ' rad/s')}",
        ),
        (
            "phase margin",
            f"{_fmt(mg.phase_margin_deg, ' deg')} at {_fmt(mg.gain_crossover, ' rad/s')}",
        ),
        ("open-loop RHP poles", str(mg.open_loop_rhp_poles)),
    ]
    if mg.open_loop_rhp_poles:
        rows.append(("note", "open loop unstable: the margins alone do not decide stability"))
    _print_rows(rows)
    if args.no_sim:
        if args.plot:
            raise InputError("plot: needs the integration (drop --no-sim)")
        return 0
    tr = fl.simulate(net, law, args.duration, dt=args.dt)
    s = tr.summary()
    print(f"integration: {tr.method}")
    print(f"  over t >= {s['from_time']:g} s:")
    _print_rows(
        [
            ("mean q [packets]", _fmt(s["mean_q"])),
            ("std q [packets]", _fmt(s["std_q"])),
            ("mean W [packets]", _fmt(s["mean_w"])),
            ("mean p", _fmt(s["mean_p"])),
            ("utilisation", _fmt(s["utilization"])),
        ]
    )
    if args.plot:
        _plot_fluid(tr, eq, _law_str(law), args.plot)
        print(f"plot written to {args.plot}")
    return 0


def _plot_fluid(tr: fl.FluidTrace, eq: fl.Equilibrium, title: str, path: str) -> None:
    from matplotlib.figure import Figure

    step = max(1, len(tr.t) // 20000)
    t = tr.t[::step]
    fig = Figure(figsize=(9, 7))
    axes = fig.subplots(3, 1, sharex=True)
    for ax, y, lab, y0 in zip(
        axes,
        (tr.q, tr.w, tr.p),
        ("q(t) [packets]", "W(t) [packets]", "p(t)"),
        (eq.q0, eq.w0, eq.p0),
        strict=True,
    ):
        ax.plot(t, y[::step], lw=0.9)
        ax.axhline(y0, color="k", ls="--", lw=0.8, label="equilibrium")
        ax.set_ylabel(lab)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper right")
    axes[0].set_title(title, fontsize=9)
    axes[-1].set_xlabel("t [s]")
    fig.tight_layout()
    _save(fig, path)


# ----------------------------------------------------------------------------------------------
# routh
# ----------------------------------------------------------------------------------------------


def _add_routh(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "routh",
        help="Routh-Hurwitz table of a real polynomial",
        description=(
            "Routh-Hurwitz table, sign changes (= right-half-plane roots) and verdict. "
            "Coefficients highest power first, separated by spaces or commas; put '--' before "
            "them if the first one is negative."
        ),
    )
    p.add_argument("coefficients", nargs="+", help="a_0 a_1 ... a_n (a_0 s^n + ... + a_n)")
    p.set_defaults(func=_cmd_routh)


def _cmd_routh(args: argparse.Namespace) -> int:
    coeffs = parse_coefficients(" ".join(args.coefficients))
    res = routh(coeffs)
    print(f"polynomial: {_poly_str(res.coefficients)}")
    print(res.format())
    roots = np.roots(res.coefficients)
    print(
        f"numpy.roots cross-check: {int(np.sum(roots.real > 1e-9))} root(s) with real part > 1e-9,"
        f" {int(np.sum(np.abs(roots.real) <= 1e-9))} with |real part| <= 1e-9"
    )
    return 0
