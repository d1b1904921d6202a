"""``aqmlab testbed SCENARIO`` and ``aqmlab testbed --cleanup``."""

from __future__ import annotations

import argparse
import sys

from aqmlab.errors import InputError


def _pairs(items: list[str] | None, flag: str, example: str) -> dict[str, str]:
    """KEY=VALUE arguments of a repeatable option as a dict; one without "=" refused."""
    out = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq:
            raise InputError(f"{flag} {item}: write it KEY=VALUE ({example})")
        out[key.strip()] = value
    return out


def _cmd(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aqmlab import outdir, testbed
    from aqmlab.cli.summary import print_summary
    from aqmlab.scenario import schema as scenario
    from aqmlab.testbed import plan

    if args.cleanup:
        gone, kept = testbed.cleanup()
        print(f"removed {len(gone)} testbed leftover(s){': ' + ' '.join(gone) if gone else ''}")
        if kept:
            print(f"left {len(kept)} namespace(s) of running testbed runs alone: {' '.join(kept)}")
        return 0
    if args.scenario is None:
        raise InputError("testbed: give a SCENARIO file (or --cleanup)")
    neighbours = testbed.check_neighbours(args.neighbours)  # refused before root is asked for
    sc = scenario.load(Path(args.scenario))
    testbed._refuse_python_aqm(sc)  # before anything is said or set up: it cannot run there
    testbed._require_root()
    if args.hold:
        out = Path(args.out) if args.out else Path("runs") / f"{sc.name}-hold"
        testbed.hold(sc, out=out, seed=args.seed, cc=args.cc, neighbours=neighbours)
        return 0
    # Refused before the run, not after it.
    sysctls = testbed.check_sysctls(_pairs(args.sysctl, "--sysctl", "net.ipv4.tcp_frto=0"))
    route = testbed.check_route_options(_pairs(args.route_option, "--route-option", "quickack=1"))
    if not args.out:  # the default runs/<name>-testbed must stay under runs/
        outdir.safe_name(sc.name, "name (the default output directory runs/<name> comes from it)")
    out = outdir.check(Path(args.out) if args.out else Path("runs") / f"{sc.name}-testbed")
    print(
        f"testbed: {sc.name} on real Linux TCP for {sc.duration} (root, namespaces aqtb*)",
        file=sys.stderr,
    )
    have, lacking = plan.congestion_controls()
    print(
        f"testbed: kernel congestion controls {' '.join(have)}; "
        f"lacking {plan.lacking_line(lacking)}",
        file=sys.stderr,
    )
    res = testbed.testbed(
        sc,
        seed=args.seed,
        out=out,
        plot=not args.no_plot,
        cc=args.cc,
        sysctls=sysctls,
        route=route,
        neighbours=neighbours,
    )
    # The shared table sums per-flow timeouts, which TCP_INFO does not give: shown as 0 there.
    view = dict(
        res.summary, flows=[dict(f, timeouts=f["timeouts"] or 0) for f in res.summary["flows"]]
    )
    print_summary(type(res)(summary=view, links=res.links, flows=res.flows))
    tb = res.summary["testbed"]
    c = tb["conservation"]
    ce = sum(f["delivered_ce"] for f in res.summary["flows"])
    print(
        f"forwarder: received {c['received']} = sent {c['sent']} + dropped {c['dropped']} + "
        f"queued {c['in_system']}; ECN-echoed segments at senders {ce}; "
        f"(timeouts: not measured on real stacks)"
    )
    print(f"wrote {res.out_dir}/ (summary.json with a 'testbed' section, .parquet, report.html)")
    return 0


def register(sub) -> None:
    """Adds the ``testbed`` subcommand."""
    t = sub.add_parser("testbed", help="run a scenario on real Linux TCP through aqmlab-fwd (root)")
    t.add_argument("scenario", nargs="?", help="TOML scenario")
    t.add_argument("--out", help="results directory (default: runs/<name>-testbed)")
    t.add_argument("--seed", type=int, help="override the scenario's seed")
    t.add_argument(
        "--cc",
        metavar="CC",
        help="kernel TCP for every flow group, overriding the scenario's tcp.variant: one of "
        "aqmlab's names (newreno, sack, cubic, bbr, dctcp, prague) or any congestion control in "
        "the kernel's tcp_available_congestion_control (the run prints which it has and lacks)",
    )
    t.add_argument(
        "--sysctl",
        action="append",
        metavar="KEY=VALUE",
        help="a net.ipv4.tcp_* sysctl for the sender and receiver namespaces (repeatable), e.g. "
        "net.ipv4.tcp_frto=0 (F-RTO off; note Linux 6.17 and later ignore tcp_recovery=0: RACK "
        "stays on); recorded in summary.json's testbed.sysctls",
    )
    t.add_argument(
        "--route-option",
        action="append",
        metavar="KEY=VALUE",
        help="an extra metric of the sender and receiver routes (repeatable): quickack=1 turns "
        "the receivers' delayed ACKs off, initrwnd=N opens the receivers' initial window at N "
        "segments; recorded in summary.json's testbed.routes",
    )
    t.add_argument(
        "--neighbours",
        default="resolve",
        metavar="MODE",
        help="how the end hosts learn each other's Ethernet addresses: resolve (the default) by "
        "ARP, whose requests and replies cross the forwarder's queues, so a flow starting at a "
        "full queue connects late; static, permanent neighbour entries set before the traffic, "
        "so a SYN leaves at once as on a path whose hops are resolved (the simulator's "
        "default); recorded in summary.json's testbed.neighbours",
    )
    t.add_argument("--no-plot", action="store_true", help="no queue.png / report.html")
    t.add_argument(
        "--hold",
        action="store_true",
        help="build the scenario's network and forwarder without traffic, print how to run "
        "ping/iperf3 on its hosts, hold until Ctrl-C, then write the forwarder's statistics to "
        "--out (default runs/<name>-hold)",
    )
    t.add_argument(
        "--cleanup",
        action="store_true",
        help="remove namespaces and temporary directories left by killed runs (never a live run's)",
    )
    t.set_defaults(func=_cmd)
