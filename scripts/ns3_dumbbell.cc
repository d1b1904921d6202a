// The one ns-3 program of aqmlab's cross-checks (docs/crosscheck-ns3.md): scripts/crosscheck_ns3.py
// (DropTail and RED, NewReno), scripts/crosscheck_ns3_codel.py (CoDel and PIE) and
// scripts/crosscheck_ns3_tcp.py (ns-3's default TCP and CUBIC through FIFO, RED, PIE and CoDel on
// dumbbells, a parking lot and web traffic). It replaced two near-copies (ns3_dumbbell.cc and
// ns3_dumbbell_aqm.cc); every case is an option of this one program.
//
// The network comes from one of two places:
//   --graph=FILE: any network aqmlab builds (its `build_config` output, written by the Python
//     script): lines `node host|router`, `link NAME FROM TO RATE_BPS DELAY_S BUFFER_PKTS AQM
//     MONITOR` (unidirectional, as aqmlab's; each link needs its reverse, which becomes the other
//     direction of one ns-3 point-to-point channel, and both must have the same delay) and
//     `flow SRC DST START_S SIZE_BYTES [CC]` (0 = bulk; CC: that sender host's --tcp). Routes are ns-3's global routing (fewest
//     hops); the topologies of the cross-checks are trees, so each route is the only one and is
//     aqmlab's too.
//   otherwise the dumbbell of one scenarios/crosscheck/*.toml case, from --flows, --delays (file
//     of one-way access delays per flow, ms) and --starts (file of start times, s):
//     N sender hosts S_i -- router A ==(bottleneck)== router B -- N receiver hosts R_i;
//     access links 1 Gb/s, one-way delay d_i (the same d_i on S_i-A and B-R_i, as aqmlab's
//     dumbbell); bottleneck 100 Mb/s, 2 ms one way, both directions; only A -> B is monitored.
//
// Devices: Mtu 1600 bytes (--mtu). ns-3's default, 1500, makes IPv4 fragment every 1512-byte data
// packet of a TCP with timestamps (1460 + 20 + 32) into two packets on the wire.
// Queues: every point-to-point device's own TxQueue is 1 packet, so the traffic-control queue disc
// holds the queue: per link direction CoDelQueueDisc, PieQueueDisc, RedQueueDisc or FifoQueueDisc
// ("droptail") with MaxSize = the link's buffer in packets. Installed before addresses are
// assigned, so Ipv4AddressHelper installs no default (FqCoDel) queue disc.
//
// TCP options: --tcp=newreno|cubic|dctcp|ledbat, --sack, --recovery=classic|prr|prr-rfc, --timestamps,
// --limitedTransmit, --minRto (ms), --delAck (DelAckCount), --delAckTimeout (ms), --hystart
// (TcpCubic's HyStart), --mtu, --fqQuantum, --probePrr (a unit probe of ns-3's PRR, no network),
// --rtoTrace (a line per timeout and fast-recovery entry, below), --dropTrace (a line per drop at the
// bottleneck queue disc, below), --ackTrace (a line per receiver arrival and ACK with its reason, below),
// --bbrTrace and --phantomTrace (each sender's TcpBbr state; its sent list against the queue disc's
// drops; 10 ms samples, below; --rtxTrace with the latter: its retransmitted items), --rateTrace
// (each TcpBbr sender's rate sample per ACK, below). Defaults
// are aqmlab's classic model (NewReno, classic recovery, SACK and timestamps off, DelAckCount 1,
// MinRto 200 ms, HyStart off); ns-3's own defaults are TcpCubic, PRR, SACK, timestamps,
// DelAckCount 2 with a 200 ms timer, MinRto 1 s, HyStart on, limited transmit on.
// Always: SegmentSize 1460, InitialCwnd 10, ClockGranularity 1 ms, 4 MB socket
// buffers, DataRetries 1000 (ns-3 would otherwise abort a connection after 6 back-to-back RTOs),
// ConnTimeout 1 s (aqmlab's init_rto). Every flow is a BulkSendApplication (MaxBytes = its size,
// 0 for bulk) to its own PacketSink port, started at the time given (the caller moves ns-3's
// starts one handshake earlier when it wants data to start at aqmlab's times).
//
// AQMs: --aqm=droptail|red|codel|pie (dumbbell) or per link (graph); RED: MinTh, MaxTh,
// LInterm = 1/max_p, QW, Wait (--redWait), Gentle (--redGentle), MeanPktSize, LinkBandwidth and
// LinkDelay of its link, UseHardDrop; CoDel: Target, Interval, MinBytes; PIE: QueueDelayReference,
// Tupdate, A, B, MaxBurstAllowance, UseDequeueRateEstimator, UseCapDropAdjustment,
// UseDerandomization. ECN and L4S off, except RED's with --redEcn (dctcp-example.cc's UseEcn on,
// UseHardDrop off).
//
// Measured per monitored link over the window [warmup, duration] (the first monitored link's
// numbers are also the top-level fields, as before):
//   utilisation: bytes on the wire (IP packet + 2-byte PPP header) whose transmission ended in the
//     window / (C T); throughput_bps: the same without the PPP header;
//   queue: time-weighted mean of the queue disc's PacketsInQueue (qdisc_mean) and of the device
//     TxQueue's (devq_mean), integrated exactly from their traces. qdisc + devq = packets waiting,
//     excluding the one in transmission (aqmlab's convention);
//   loss: (drops of the queue disc) / (packets the queue disc received);
//   sojourn: enqueue to dequeue of the queue disc, over the packets dequeued and NOT dropped by the
//     AQM after dequeue (CoDel's head drops also fire "Dequeue"; their "DropAfterDequeue" takes
//     them out again); to_tx: queue-disc enqueue to the start of transmission (PhyTxBegin), i.e.
//     sojourn + the wait in the 1-packet device queue: aqmlab's queueing delay;
//   CoDel's dropping state (DropState): entries and the time fraction spent in it.
// Per flow: goodput = PacketSink bytes received in the window * 8 / T; for finite flows the
// completion time = from the first data segment the sender transmits (after the handshake) to the
// ACK covering the last byte (HighestRxAck = size + 1): aqmlab's definition without a handshake.
// TCP events summed over the senders: entries into fast recovery, timeouts, retransmissions.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

double g_warmup = 10.0;

bool
InWindow()
{
    return Simulator::Now().GetSeconds() >= g_warmup;
}

// Exact time integral of a piecewise-constant traced value over [warmup, now].
struct Integrator
{
    double last_t = 0.0;
    double value = 0.0;
    double area = 0.0;

    void Change(uint32_t /*old*/, uint32_t now_value)
    {
        Advance(Simulator::Now().GetSeconds());
        value = now_value;
    }

    void Advance(double t)
    {
        double from = std::max(last_t, g_warmup);
        if (t > from)
        {
            area += value * (t - from);
        }
        last_t = t;
    }
};

// Queueing delay sums over the window, seconds.
struct DelaySum
{
    double sum = 0.0;
    double sq = 0.0;
    uint64_t n = 0;

    void Add(double d, int sign = 1)
    {
        sum += sign * d;
        sq += sign * d * d;
        n += sign;
    }

    double Mean() const
    {
        return n ? sum / n : 0.0;
    }

    double Std() const
    {
        if (n < 2)
        {
            return 0.0;
        }
        double m = sum / n;
        return std::sqrt(std::max(0.0, sq / n - m * m));
    }
};

// Counters of one queue disc, read at the start and the end of the window.
struct QStats
{
    uint64_t received = 0;
    uint64_t dropped = 0;
    uint64_t early = 0;
    uint64_t forced = 0;
    uint64_t overflow = 0;
};

QStats
TakeQ(Ptr<QueueDisc> q, const std::string& aqm)
{
    QStats s;
    const QueueDisc::Stats& st = q->GetStats();
    s.received = st.nTotalReceivedPackets;
    s.dropped = st.nTotalDroppedPackets;
    if (aqm == "red")
    {
        s.early = st.GetNDroppedPackets(RedQueueDisc::UNFORCED_DROP);
        s.forced = st.GetNDroppedPackets(RedQueueDisc::FORCED_DROP);
        s.overflow = st.GetNDroppedPackets(QueueDisc::INTERNAL_QUEUE_DROP);
    }
    else if (aqm == "codel")
    {
        // early = head drops of the control law; overflow = arrivals refused by a full buffer.
        s.early = st.GetNDroppedPackets(CoDelQueueDisc::TARGET_EXCEEDED_DROP);
        s.overflow = st.GetNDroppedPackets(CoDelQueueDisc::OVERLIMIT_DROP) +
                     st.GetNDroppedPackets(QueueDisc::INTERNAL_QUEUE_DROP);
    }
    else if (aqm == "pie")
    {
        // early = PIE's random drops on arrival; overflow = arrivals refused by a full buffer.
        s.early = st.GetNDroppedPackets(PieQueueDisc::UNFORCED_DROP);
        s.overflow = st.GetNDroppedPackets(PieQueueDisc::FORCED_DROP) +
                     st.GetNDroppedPackets(QueueDisc::INTERNAL_QUEUE_DROP);
    }
    else if (aqm == "fq_codel")
    {
        // overflow = drops from the fattest queue over the limit; early = the rest (CoDel's
        // head drops in the per-flow queues).
        s.overflow = st.GetNDroppedPackets(FqCoDelQueueDisc::OVERLIMIT_DROP);
        s.early = s.dropped - s.overflow;
    }
    else if (aqm == "fq_pie")
    {
        // overflow = drops from the fattest queue over the limit; early = the rest (PIE's
        // random drops on arrival in the per-flow queues).
        s.overflow = st.GetNDroppedPackets(FqPieQueueDisc::OVERLIMIT_DROP);
        s.early = s.dropped - s.overflow;
    }
    else if (aqm == "cobalt")
    {
        // overflow = arrivals refused by a full buffer; early = COBALT's head drops (CoDel's
        // schedule and BLUE's random drops).
        s.overflow = st.GetNDroppedPackets(CobaltQueueDisc::OVERLIMIT_DROP);
        s.early = s.dropped - s.overflow;
    }
    else if (aqm == "fq_cobalt")
    {
        // overflow = drops from the fattest queue over the limit; early = the rest (COBALT's
        // head drops in the per-flow queues).
        s.overflow = st.GetNDroppedPackets(FqCobaltQueueDisc::OVERLIMIT_DROP);
        s.early = s.dropped - s.overflow;
    }
    else
    {
        s.overflow = st.GetNDroppedPackets(FifoQueueDisc::LIMIT_EXCEEDED_DROP);
    }
    return s;
}

// COBALT's BLUE drop probability (CobaltQueueDisc's Pdrop attribute) of the queue disc
// (cobalt) or over the flow queues' CobaltQueueDiscs (fq_cobalt): mean, max, queues read.
struct Pdrop
{
    double mean = 0;
    double max = 0;
    uint32_t n = 0;
};

Pdrop
TakePdrop(Ptr<QueueDisc> q, const std::string& aqm)
{
    std::vector<Ptr<QueueDisc>> qs;
    if (aqm == "cobalt")
    {
        qs.push_back(q);
    }
    else if (aqm == "fq_cobalt")
    {
        for (size_t i = 0; i < q->GetNQueueDiscClasses(); i++)
        {
            qs.push_back(q->GetQueueDiscClass(i)->GetQueueDisc());
        }
    }
    Pdrop r;
    for (auto& c : qs)
    {
        DoubleValue v;
        c->GetAttribute("Pdrop", v);
        r.mean += v.Get();
        r.max = std::max(r.max, v.Get());
        r.n++;
    }
    if (r.n)
    {
        r.mean /= r.n;
    }
    return r;
}

// One monitored link direction: its device, its queue disc and everything measured on them.
struct Monitor
{
    std::string name;
    std::string aqm;
    double rateBps = 0;
    Ptr<QueueDisc> qdisc;
    Integrator qdiscQ;
    Integrator devQ;
    Integrator dropping; // CoDel's dropping state (0/1): time fraction in the window
    DelaySum sojourn;     // queue disc: enqueue -> dequeue, packets not dropped after dequeue
    DelaySum sojournDrop; // the same for packets the AQM dropped after dequeue (CoDel)
    DelaySum toTx;        // queue disc enqueue -> start of transmission
    // Queue-disc enqueue times of the packets dequeued from the queue disc and not yet started on
    // the device, in order. The queue disc and the device queue are FIFOs, so the front is the
    // next packet PhyTxBegin sees. (Packet uids cannot pair them: ns-3's TCP cuts its segments
    // from the application's 14600-byte writes, and the fragments keep the uid of the write.)
    std::deque<double> pending;
    uint64_t pairingErrors = 0;      // PhyTxBegin without a dequeued packet (should stay 0)
    uint64_t dropStates[2] = {0, 0}; // CoDel entries into the dropping state: run, window
    uint64_t txPktsWindow = 0;
    uint64_t txWireBytesWindow = 0;
    uint64_t txPktsTotal = 0;
    QStats atWarmup;
    // COBALT's Pdrop sampled every 10 ms (cobalt, fq_cobalt): the largest seen over the run
    // and the time average of the queues' mean over the window.
    double pdropMaxRun = 0;
    double pdropMeanSum = 0;
    uint64_t pdropSamples = 0;

    void SamplePdrop()
    {
        Pdrop p = TakePdrop(qdisc, aqm);
        pdropMaxRun = std::max(pdropMaxRun, p.max);
        if (InWindow())
        {
            pdropMeanSum += p.mean;
            pdropSamples++;
        }
        Simulator::Schedule(MilliSeconds(10), &Monitor::SamplePdrop, this);
    }

    void Dequeue(Ptr<const QueueDiscItem> item)
    {
        pending.push_back(item->GetTimeStamp().GetSeconds());
        if (InWindow())
        {
            sojourn.Add((Simulator::Now() - item->GetTimeStamp()).GetSeconds());
        }
    }

    void DropAfterDequeue(Ptr<const QueueDiscItem> item, const char* /*reason*/)
    {
        // "Dequeue" fired for this packet at this same instant: take it out of the sent packets.
        if (InWindow())
        {
            double d = (Simulator::Now() - item->GetTimeStamp()).GetSeconds();
            sojourn.Add(d, -1);
            sojournDrop.Add(d);
        }
        pending.pop_back(); // the last one pushed
    }

    void TxBegin(Ptr<const Packet>)
    {
        if (pending.empty())
        {
            pairingErrors++;
            return;
        }
        if (InWindow())
        {
            toTx.Add(Simulator::Now().GetSeconds() - pending.front());
        }
        pending.pop_front();
    }

    void TxEnd(Ptr<const Packet> p)
    {
        txPktsTotal++;
        if (InWindow())
        {
            txPktsWindow++;
            txWireBytesWindow += p->GetSize();
        }
    }

    void DropState(bool from, bool to)
    {
        dropping.Change(from, to);
        if (to && !from)
        {
            dropStates[0]++;
            if (InWindow())
            {
                dropStates[1]++;
            }
        }
    }

    void Connect(Ptr<PointToPointNetDevice> dev)
    {
        qdisc->TraceConnectWithoutContext("PacketsInQueue",
                                          MakeCallback(&Integrator::Change, &qdiscQ));
        dev->GetQueue()->TraceConnectWithoutContext("PacketsInQueue",
                                                    MakeCallback(&Integrator::Change, &devQ));
        dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&Monitor::TxEnd, this));
        dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&Monitor::TxBegin, this));
        qdisc->TraceConnectWithoutContext("Dequeue", MakeCallback(&Monitor::Dequeue, this));
        qdisc->TraceConnectWithoutContext("DropAfterDequeue",
                                          MakeCallback(&Monitor::DropAfterDequeue, this));
        if (aqm == "codel")
        {
            qdisc->TraceConnectWithoutContext("DropState", MakeCallback(&Monitor::DropState, this));
        }
        if (aqm == "cobalt" || aqm == "fq_cobalt")
        {
            Simulator::Schedule(MilliSeconds(10), &Monitor::SamplePdrop, this);
        }
    }

    // The link's numbers over the window, as JSON members (no braces).
    std::string Json(double T) const;
};

std::string
Monitor::Json(double T) const
{
    QStats end = TakeQ(qdisc, aqm);
    Pdrop pEnd = TakePdrop(qdisc, aqm);
    uint64_t arrived = end.received - atWarmup.received;
    uint64_t dropped = end.dropped - atWarmup.dropped;
    uint64_t ipBytes = txWireBytesWindow - 2 * txPktsWindow; // PPP header: 2 bytes
    char buf[4096];
    std::snprintf(
        buf,
        sizeof buf,
        "\"name\": \"%s\", \"aqm\": \"%s\",\n"
        "  \"utilisation\": %.6f, \"throughput_bps\": %.1f,\n"
        "  \"qdisc_mean_pkts\": %.4f, \"devq_mean_pkts\": %.4f, \"queue_mean_pkts\": %.4f,\n"
        "  \"arrived\": %lu, \"dropped\": %lu,\n"
        "  \"dropped_early\": %lu, \"dropped_forced\": %lu, \"dropped_overflow\": %lu,\n"
        "  \"loss_ratio\": %.6f,\n"
        "  \"sojourn_mean_s\": %.9f, \"sojourn_std_s\": %.9f, \"sojourn_n\": %lu,\n"
        "  \"sojourn_dropped_mean_s\": %.9f, \"sojourn_dropped_n\": %lu,\n"
        "  \"to_tx_mean_s\": %.9f, \"to_tx_std_s\": %.9f, \"to_tx_n\": %lu,\n"
        "  \"codel_drop_states\": %lu, \"codel_drop_states_window\": %lu, "
        "\"codel_dropping_fraction\": %.6f,\n"
        "  \"tx_pairing_errors\": %lu, \"tx_pending_at_end\": %lu,\n"
        "  \"bottleneck_arrivals_total\": %lu, \"bottleneck_tx_total\": %lu,\n"
        "  \"pdrop_queues\": %u, \"pdrop_mean_end\": %.6f, \"pdrop_max_end\": %.6f, "
        "\"pdrop_max_run\": %.6f, \"pdrop_mean_window\": %.6f",
        name.c_str(),
        aqm.c_str(),
        txWireBytesWindow * 8.0 / (rateBps * T),
        ipBytes * 8.0 / T,
        qdiscQ.area / T,
        devQ.area / T,
        (qdiscQ.area + devQ.area) / T,
        (unsigned long)arrived,
        (unsigned long)dropped,
        (unsigned long)(end.early - atWarmup.early),
        (unsigned long)(end.forced - atWarmup.forced),
        (unsigned long)(end.overflow - atWarmup.overflow),
        arrived ? double(dropped) / arrived : 0.0,
        sojourn.Mean(),
        sojourn.Std(),
        (unsigned long)sojourn.n,
        sojournDrop.Mean(),
        (unsigned long)sojournDrop.n,
        toTx.Mean(),
        toTx.Std(),
        (unsigned long)toTx.n,
        (unsigned long)dropStates[0],
        (unsigned long)dropStates[1],
        dropping.area / T,
        (unsigned long)pairingErrors,
        (unsigned long)pending.size(),
        (unsigned long)end.received,
        (unsigned long)txPktsTotal,
        pEnd.n,
        pEnd.mean,
        pEnd.max,
        pdropMaxRun,
        pdropSamples ? pdropMeanSum / pdropSamples : 0.0);
    return buf;
}

// TCP events of all senders: [0] whole run, [1] measurement window only.
uint64_t g_recoveries[2] = {0, 0}; // entries into fast recovery
uint64_t g_rtos[2] = {0, 0};       // retransmission timeouts (every expiry, backoffs included)
uint64_t g_retx[2] = {0, 0};       // retransmitted data segments
std::ofstream g_cwnd;

void
Count(uint64_t* c)
{
    c[0]++;
    if (InWindow())
    {
        c[1]++;
    }
}

void
CongState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    if (to == TcpSocketState::CA_RECOVERY && from != to)
    {
        Count(g_recoveries);
    }
}

// TcpSocketBase::ReTxTimeout doubles m_rto (capped at 60 s) and is the only place that does; RTT
// samples and new ACKs set it to max(srtt + 4 rttvar, MinRto). So a doubling is a timeout.
void
Rto(Time from, Time to)
{
    if (to > from && (to == from + from || to == Seconds(60)))
    {
        Count(g_rtos);
    }
}

void
Retx(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&, Ptr<const TcpSocketBase>)
{
    Count(g_retx);
}

void
CwndTrace(uint32_t /*old*/, uint32_t now_value)
{
    g_cwnd << Simulator::Now().GetSeconds() << " " << now_value / 1460.0 << "\n";
}

void
TxTrace(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
    {
        g_cwnd << Simulator::Now().GetSeconds() << " tx " << h.GetSequenceNumber().GetValue() / 1460
               << "\n";
    }
}

void
RxTrace(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    g_cwnd << Simulator::Now().GetSeconds() << " ack " << h.GetAckNumber().GetValue() / 1460 << "\n";
}

void
CongStateTrace(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    g_cwnd << Simulator::Now().GetSeconds() << " state " << int(from) << " " << int(to) << "\n";
}

// ---------------------------------------------------------------------------------------------
// The network description.

struct LinkSpec
{
    std::string name;
    uint32_t from = 0;
    uint32_t to = 0;
    double rateBps = 0;
    double delayS = 0;
    uint32_t buffer = 0;
    std::string aqm = "droptail";
    bool monitor = false;
};

struct FlowSpec
{
    uint32_t src = 0;
    uint32_t dst = 0;
    double start = 0;
    uint64_t size = 0; // bytes; 0 = bulk
    std::string cc;    // congestion control of this flow's sender host ("" = --tcp's)
};

struct Graph
{
    std::vector<bool> host; // per node: host (true) or router
    std::vector<LinkSpec> links;
    std::vector<FlowSpec> flows;
};

std::vector<double>
ReadNumbers(const std::string& path)
{
    std::vector<double> v;
    std::ifstream f(path);
    double x;
    while (f >> x)
    {
        v.push_back(x);
    }
    return v;
}

// Reads the --graph file (format in the header comment). Exits with 2 on a malformed line.
Graph
ReadGraph(const std::string& path)
{
    Graph g;
    std::ifstream f(path);
    if (!f)
    {
        std::cerr << "--graph: cannot read " << path << "\n";
        std::exit(2);
    }
    std::string line;
    while (std::getline(f, line))
    {
        std::istringstream in(line);
        std::string kind;
        if (!(in >> kind) || kind[0] == '#')
        {
            continue;
        }
        bool ok = true;
        if (kind == "node")
        {
            std::string k;
            ok = bool(in >> k);
            g.host.push_back(k == "host");
        }
        else if (kind == "link")
        {
            LinkSpec l;
            int mon = 0;
            ok = bool(in >> l.name >> l.from >> l.to >> l.rateBps >> l.delayS >> l.buffer >> l.aqm >>
                      mon);
            l.monitor = mon != 0;
            g.links.push_back(l);
        }
        else if (kind == "flow")
        {
            FlowSpec fl;
            ok = bool(in >> fl.src >> fl.dst >> fl.start >> fl.size);
            in >> fl.cc; // optional: the flow's congestion control (CcType)
            g.flows.push_back(fl);
        }
        else
        {
            ok = false;
        }
        if (!ok)
        {
            std::cerr << "--graph: bad line: " << line << "\n";
            std::exit(2);
        }
    }
    return g;
}

// The dumbbell of scenarios/crosscheck/*.toml (header comment): nodes 0 = A, 1 = B, then the N
// senders, then the N receivers; only A -> B monitored.
Graph
DumbbellGraph(const std::vector<double>& delaysMs,
              const std::vector<double>& starts,
              uint32_t buffer,
              uint32_t accessBuffer,
              const std::string& aqm)
{
    Graph g;
    uint32_t n = delaysMs.size();
    g.host.assign(2 + 2 * n, true);
    g.host[0] = g.host[1] = false;
    g.links.push_back({"bottleneck", 0, 1, 100e6, 2e-3, buffer, aqm, true});
    g.links.push_back({"bottleneck-rev", 1, 0, 100e6, 2e-3, buffer, "droptail", false});
    for (uint32_t i = 0; i < n; i++)
    {
        uint32_t s = 2 + i;
        uint32_t r = 2 + n + i;
        double d = delaysMs[i] * 1e-3;
        g.links.push_back({"S-A", s, 0, 1e9, d, accessBuffer, "droptail", false});
        g.links.push_back({"A-S", 0, s, 1e9, d, accessBuffer, "droptail", false});
        g.links.push_back({"B-R", 1, r, 1e9, d, accessBuffer, "droptail", false});
        g.links.push_back({"R-B", r, 1, 1e9, d, accessBuffer, "droptail", false});
        g.flows.push_back({s, r, starts[i], 0});
    }
    return g;
}

// ---------------------------------------------------------------------------------------------
// Building it in ns-3.

struct Net
{
    NodeContainer nodes;
    std::vector<Ptr<NetDevice>> dev; // per link: the device transmitting on it
    std::vector<Ptr<QueueDisc>> qdisc;
    std::vector<Ipv4Address> hostAddr; // per node: its (single) interface's address
};

// The queue disc of one link direction. RED's idle-time decay needs its link's rate and delay.
void
InstallQueueDisc(const LinkSpec& l, Ptr<NetDevice> dev, Net& net, size_t index)
{
    std::string limit = std::to_string(l.buffer) + "p";
    TrafficControlHelper tc;
    if (l.aqm == "red")
    {
        tc.SetRootQueueDisc("ns3::RedQueueDisc",
                            "MaxSize",
                            StringValue(limit),
                            "LinkBandwidth",
                            DataRateValue(DataRate(uint64_t(l.rateBps))),
                            "LinkDelay",
                            TimeValue(Seconds(l.delayS)));
    }
    else if (l.aqm == "codel")
    {
        tc.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (l.aqm == "pie")
    {
        tc.SetRootQueueDisc("ns3::PieQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (l.aqm == "droptail")
    {
        tc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (l.aqm == "fq_codel")
    {
        // ns-3's defaults (RFC 8290: 1024 flows, 5/100 ms, drop batch 64) with the link's limit.
        tc.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (l.aqm == "fq_pie")
    {
        // ns-3's defaults (1024 flows; per-flow PIE 15/15 ms, A 0.125, B 1.25, MaxBurstAllowance
        // 150 ms, timestamps, cap drop adjustment on, derandomisation off; drop batch 64 from
        // the fattest queue; quantum = the device's MTU) with the link's limit. FqPie sets its
        // PIE children from its own attributes, not PieQueueDisc's (Config defaults above).
        tc.SetRootQueueDisc("ns3::FqPieQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (l.aqm == "cobalt")
    {
        // ns-3's defaults (5/100 ms, 1/256, 1/4096, BlueThreshold 400 ms, no ECN), the link's
        // limit in packets (ns-3's own default is 1.5 MB).
        tc.SetRootQueueDisc("ns3::CobaltQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (l.aqm == "fq_cobalt")
    {
        // ns-3's defaults (1024 flows, 5/100 ms, BLUE 1/256 and 1/4096, BlueThreshold 400 ms,
        // ECN on, drop batch 64, quantum = the device's MTU) with the link's limit.
        tc.SetRootQueueDisc("ns3::FqCobaltQueueDisc", "MaxSize", StringValue(limit));
    }
    else
    {
        std::cerr << "link " << l.name << ": unknown aqm " << l.aqm
                  << " (droptail, red, codel, pie, fq_codel, fq_pie, cobalt, fq_cobalt)\n";
        std::exit(2);
    }
    net.qdisc[index] = tc.Install(dev).Get(0);
}

// One point-to-point channel per pair of opposite links, its queue discs, and its addresses.
Net
BuildNetwork(const Graph& g, uint32_t mtu)
{
    Net net;
    net.nodes.Create(g.host.size());
    InternetStackHelper stack;
    stack.InstallAll();
    size_t nl = g.links.size();
    net.dev.assign(nl, nullptr);
    net.qdisc.assign(nl, nullptr);
    net.hostAddr.assign(g.host.size(), Ipv4Address());
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    for (size_t i = 0; i < nl; i++)
    {
        const LinkSpec& a = g.links[i];
        if (net.dev[i])
        {
            continue;
        }
        size_t j = nl;
        for (size_t k = 0; k < nl; k++)
        {
            if (!net.dev[k] && k != i && g.links[k].from == a.to && g.links[k].to == a.from)
            {
                j = k;
                break;
            }
        }
        if (j == nl || std::abs(g.links[j].delayS - a.delayS) > 1e-12)
        {
            std::cerr << "link " << a.name << ": needs a reverse link with the same delay\n";
            std::exit(2);
        }
        const LinkSpec& b = g.links[j];
        PointToPointHelper p2p;
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(a.delayS)));
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
        p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
        NetDeviceContainer d = p2p.Install(net.nodes.Get(a.from), net.nodes.Get(a.to));
        d.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate(uint64_t(a.rateBps))));
        d.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate(uint64_t(b.rateBps))));
        net.dev[i] = d.Get(0);
        net.dev[j] = d.Get(1);
        InstallQueueDisc(a, d.Get(0), net, i);
        InstallQueueDisc(b, d.Get(1), net, j);
        Ipv4InterfaceContainer ifc = addr.Assign(d);
        addr.NewNetwork();
        if (g.host[a.from])
        {
            net.hostAddr[a.from] = ifc.GetAddress(0);
        }
        if (g.host[a.to])
        {
            net.hostAddr[a.to] = ifc.GetAddress(1);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    return net;
}

// ---------------------------------------------------------------------------------------------
// Flows.

struct FlowRec
{
    Ptr<PacketSink> sink;
    Ptr<BulkSendApplication> app;
    uint64_t size = 0;
    uint64_t rxAtWarmup = 0;
    double firstData = -1; // first data segment transmitted (after the handshake)
    double done = -1;      // ACK covering the last byte
};

std::vector<FlowRec> g_flows;

void
FlowTx(uint32_t i, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0 && g_flows[i].firstData < 0)
    {
        g_flows[i].firstData = Simulator::Now().GetSeconds();
    }
}

void
FlowAck(uint32_t i, SequenceNumber32 /*old*/, SequenceNumber32 now)
{
    FlowRec& f = g_flows[i];
    // ns-3's initial sequence number is 0 and the SYN takes one: the last byte is `size`.
    if (f.size && f.done < 0 && now.GetValue() >= f.size + 1)
    {
        f.done = Simulator::Now().GetSeconds();
    }
}

// --dropTrace=FILE: one line per packet the first monitored link's queue disc drops (diagnostics):
//   T FLOW SEG WHEN REASON
// T seconds; FLOW the flow (from the TCP destination port, -1 for a packet of no flow); SEG its
// first segment (1460 B from 0, as --rtoTrace); WHEN "enq" (dropped before enqueue: the queue
// disc's DropBeforeEnqueue trace) or "deq" (DropAfterDequeue: CoDel's head drops, and FqCoDel's
// and FqCobalt's overflow batches taken from the fattest queue's head); REASON ns-3's reason
// string with its spaces as underscores (e.g. "Overlimit_drop", "(Dropped_by_child_queue_disc)_
// Target_exceeded_drop").
std::unique_ptr<std::ofstream> g_dropTrace;

void
DropTraceLine(const char* when, Ptr<const QueueDiscItem> item, const char* reason)
{
    int64_t flow = -1;
    int64_t seg = -1;
    TcpHeader h;
    Ptr<Packet> p = item->GetPacket()->Copy();
    if (p->PeekHeader(h) > 0 && h.GetDestinationPort() >= 10000)
    {
        flow = h.GetDestinationPort() - 10000;
        seg = (h.GetSequenceNumber().GetValue() - 1) / 1460;
    }
    std::string r(reason);
    std::replace(r.begin(), r.end(), ' ', '_');
    *g_dropTrace << Simulator::Now().GetSeconds() << ' ' << flow << ' ' << seg << ' ' << when << ' '
                 << r << '\n';
}

// --bbrTrace=FILE: every sender's TcpBbr state and its queue at the first monitored queue disc,
// sampled every 10 ms from the flow's start (diagnostics; ns3::TcpBbr senders only):
//   T FLOW STATE PG CG MINRTT PACING BW CWND INFLIGHT CA BACKLOG DROPS
// T seconds; STATE TcpBbr::GetBbrState (0 startup, 1 drain, 2 probe_bw, 3 probe_rtt); PG, CG
// GetPacingGain, GetCwndGain; MINRTT its MinRtt trace source, ms; PACING the socket's PacingRate,
// bit/s; BW the max-bw estimate it implies, bit/s of payload: TcpBbr::SetPacingRate sets pacing =
// PG x BW x (1 - 0.01) once the pipe is filled (tcp-bbr.cc), so BW = PACING / (PG x 0.99), exact
// after STARTUP (the filter itself is private); CWND, INFLIGHT the socket's CongestionWindow and
// BytesInFlight, segments of 1460 B; CA the congestion state (0 open .. 4 loss); BACKLOG the
// packets of the flow queued in the queue disc's classes (FqCoDel: read at each flow queue's head
// through Queue::Peek, which does not dequeue); DROPS the flow's drops there so far.
struct BbrTraceFlow
{
    Ptr<TcpBbr> bbr;
    double minRttMs = 0;
    double pacingBps = 0;
    uint32_t cwnd = 0;
    uint32_t inflight = 0;
    int ca = 0;
    uint64_t drops = 0;
};

std::unique_ptr<std::ofstream> g_bbrTrace;
std::vector<BbrTraceFlow> g_bbrFlows;

int64_t
BbrTraceFlowOf(Ptr<const QueueDiscItem> item)
{
    TcpHeader h;
    Ptr<Packet> p = item->GetPacket()->Copy();
    if (p->PeekHeader(h) > 0 && h.GetDestinationPort() >= 10000)
    {
        return h.GetDestinationPort() - 10000;
    }
    return -1;
}

void
BbrTraceSample(Ptr<QueueDisc> qdisc, double end)
{
    std::vector<uint32_t> backlog(g_bbrFlows.size(), 0);
    for (size_t c = 0; c < qdisc->GetNQueueDiscClasses(); c++)
    {
        Ptr<QueueDisc> child = qdisc->GetQueueDiscClass(c)->GetQueueDisc();
        if (child->GetNInternalQueues() == 0 || child->GetInternalQueue(0)->IsEmpty())
        {
            continue;
        }
        int64_t f = BbrTraceFlowOf(child->GetInternalQueue(0)->Peek());
        if (f >= 0 && size_t(f) < backlog.size())
        {
            backlog[f] += child->GetNPackets();
        }
    }
    double now = Simulator::Now().GetSeconds();
    for (size_t i = 0; i < g_bbrFlows.size(); i++)
    {
        BbrTraceFlow& f = g_bbrFlows[i];
        if (!f.bbr)
        {
            continue;
        }
        double pg = f.bbr->GetPacingGain();
        *g_bbrTrace << now << ' ' << i << ' ' << f.bbr->GetBbrState() << ' ' << pg << ' '
                    << f.bbr->GetCwndGain() << ' ' << f.minRttMs << ' ' << f.pacingBps << ' '
                    << (pg > 0 ? f.pacingBps / (pg * 0.99) : 0) << ' ' << f.cwnd / 1460.0 << ' '
                    << f.inflight / 1460.0 << ' ' << f.ca << ' ' << backlog[i] << ' ' << f.drops
                    << '\n';
    }
    if (now + 0.01 < end)
    {
        Simulator::Schedule(MilliSeconds(10), &BbrTraceSample, qdisc, end);
    }
}

void
BbrTraceConnect(uint32_t i, Ptr<Socket> so)
{
    PointerValue cc;
    so->GetAttribute("CongestionOps", cc);
    BbrTraceFlow& f = g_bbrFlows[i];
    f.bbr = DynamicCast<TcpBbr>(cc.Get<TcpCongestionOps>());
    if (!f.bbr)
    {
        return;
    }
    using State = TcpSocketState::TcpCongState_t;
    f.bbr->TraceConnectWithoutContext(
        "MinRtt",
        MakeBoundCallback(
            +[](uint32_t k, Time, Time v) { g_bbrFlows[k].minRttMs = v.GetSeconds() * 1e3; },
            i));
    so->TraceConnectWithoutContext(
        "PacingRate",
        MakeBoundCallback(
            +[](uint32_t k, DataRate, DataRate v) { g_bbrFlows[k].pacingBps = v.GetBitRate(); },
            i));
    so->TraceConnectWithoutContext(
        "CongestionWindow",
        MakeBoundCallback(+[](uint32_t k, uint32_t, uint32_t v) { g_bbrFlows[k].cwnd = v; }, i));
    so->TraceConnectWithoutContext(
        "BytesInFlight",
        MakeBoundCallback(+[](uint32_t k, uint32_t, uint32_t v) { g_bbrFlows[k].inflight = v; },
                          i));
    so->TraceConnectWithoutContext(
        "CongState",
        MakeBoundCallback(+[](uint32_t k, State, State v) { g_bbrFlows[k].ca = v; }, i));
}

// Opens FILE, connects each flow's socket just after its application creates it, counts the
// queue disc's drops per flow and starts the 10 ms samples.
void
BbrTraceStart(const std::string& path, const std::vector<double>& starts, Ptr<QueueDisc> qdisc,
              double end)
{
    g_bbrTrace = std::make_unique<std::ofstream>(path);
    g_bbrTrace->precision(9);
    g_bbrFlows.resize(starts.size());
    for (uint32_t i = 0; i < starts.size(); i++)
    {
        Simulator::Schedule(Seconds(starts[i]) + NanoSeconds(2), [i]() {
            BbrTraceConnect(i, g_flows[i].app->GetSocket());
        });
    }
    auto drop = +[](Ptr<const QueueDiscItem> item, const char*) {
        int64_t f = BbrTraceFlowOf(item);
        if (f >= 0 && size_t(f) < g_bbrFlows.size())
        {
            g_bbrFlows[f].drops++;
        }
    };
    qdisc->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(drop));
    qdisc->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(drop));
    Simulator::Schedule(MilliSeconds(10), &BbrTraceSample, qdisc, end);
}

// --rtoTrace=FILE: one line per retransmission timeout of any sender (every expiry, backoffs
// included), written when ReTxTimeout doubles the RTO (after it marked the unSACKed segments lost,
// before it changes the congestion state and cwnd), and one line per entry into fast recovery:
//   rto T FLOW STATE UNA HIGH CWND SSTHRESH SACKED HEAD_TX RECOVERIES
//   rec T FLOW UNA HIGH
//   st T FLOW FROM TO UNA HIGH
// T seconds; STATE the congestion state before the timeout (0 open, 1 disorder, 2 cwr,
// 3 recovery, 4 loss); UNA and HIGH the first unacknowledged and the next new segment (segments
// of 1460 B from 0); CWND, SSTHRESH segments; SACKED segments SACKed above UNA; HEAD_TX the
// transmissions of segment UNA so far; RECOVERIES the flow's entries into fast recovery so far;
// `st` every change of the congestion state, FROM and TO as STATE (after the change's `rec` or
// `rto` line), so that episodes of recovery and of Loss can be timed.
struct RtoTrace
{
    std::ofstream out;
    std::vector<std::map<uint32_t, uint32_t>> sent; // per flow: segment -> transmissions
    std::vector<uint32_t> state, cwnd, ssthresh, recoveries, high;
    std::vector<Ptr<TcpSocketBase>> sock;
};

std::unique_ptr<RtoTrace> g_rtoTrace;

uint32_t
SegOf(SequenceNumber32 s)
{
    return (s.GetValue() - 1) / 1460; // ns-3's ISN is 0 and the SYN takes one
}

void
RtoTraceTx(uint32_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
    {
        g_rtoTrace->sent[i][SegOf(h.GetSequenceNumber())]++;
    }
}

void
RtoTraceAck(uint32_t i, SequenceNumber32, SequenceNumber32 now)
{
    auto& m = g_rtoTrace->sent[i];
    m.erase(m.begin(), m.lower_bound(SegOf(now)));
}

void
RtoTraceState(uint32_t i, TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    RtoTrace& t = *g_rtoTrace;
    t.state[i] = to;
    if (to == TcpSocketState::CA_RECOVERY && from != to)
    {
        t.recoveries[i]++;
        Ptr<TcpTxBuffer> b = t.sock[i]->GetTxBuffer();
        t.out << "rec " << Simulator::Now().GetSeconds() << " " << i << " "
              << SegOf(b->HeadSequence()) << " " << t.high[i] << "\n";
    }
    if (to != from)
    {
        Ptr<TcpTxBuffer> b = t.sock[i]->GetTxBuffer();
        t.out << "st " << Simulator::Now().GetSeconds() << " " << i << " " << int(from) << " "
              << int(to) << " " << SegOf(b->HeadSequence()) << " " << t.high[i] << "\n";
    }
}

void
RtoTraceRto(uint32_t i, Time from, Time to)
{
    if (!(to > from && (to == from + from || to == Seconds(60))))
    {
        return;
    }
    RtoTrace& t = *g_rtoTrace;
    Ptr<TcpTxBuffer> b = t.sock[i]->GetTxBuffer();
    uint32_t una = SegOf(b->HeadSequence());
    auto it = t.sent[i].find(una);
    t.out << "rto " << Simulator::Now().GetSeconds() << " " << i << " " << t.state[i] << " " << una
          << " " << t.high[i] << " "
          << t.cwnd[i] / 1460.0 << " " << t.ssthresh[i] / 1460.0 << " " << b->GetSacked() / 1460
          << " " << (it == t.sent[i].end() ? 0 : it->second) << " " << t.recoveries[i] << "\n";
}

void
RtoTraceConnect(uint32_t i, Ptr<Socket> so)
{
    RtoTrace& t = *g_rtoTrace;
    t.sock[i] = DynamicCast<TcpSocketBase>(so);
    so->TraceConnectWithoutContext("Tx", MakeBoundCallback(&RtoTraceTx, i));
    so->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&RtoTraceAck, i));
    so->TraceConnectWithoutContext("CongState", MakeBoundCallback(&RtoTraceState, i));
    so->TraceConnectWithoutContext("RTO", MakeBoundCallback(&RtoTraceRto, i));
    so->TraceConnectWithoutContext(
        "CongestionWindow",
        MakeBoundCallback(+[](uint32_t k, uint32_t, uint32_t v) { g_rtoTrace->cwnd[k] = v; }, i));
    so->TraceConnectWithoutContext(
        "SlowStartThreshold",
        MakeBoundCallback(+[](uint32_t k, uint32_t, uint32_t v) { g_rtoTrace->ssthresh[k] = v; },
                          i));
    so->TraceConnectWithoutContext(
        "HighestSequence",
        MakeBoundCallback(
            +[](uint32_t k, SequenceNumber32, SequenceNumber32 v) { g_rtoTrace->high[k] = SegOf(v); },
            i));
}

// --phantomTrace=FILE: every sender's sent list (TcpTxBuffer) against what became of each
// segment at the first monitored queue disc, sampled every 10 ms (diagnostics, issue 22):
//   T FLOW INFLIGHT COUNTED NET SACKRTX DROP1 DROPRTX GONE SPUR CA
// T seconds; INFLIGHT the socket's BytesInFlight (tcp-tx-buffer.cc: sent - SACKed - lost +
// retransmitted), segments of 1460 B; COUNTED the same summed item by item from the sent list
// (its operator<<, the only public view of the items' lost / retrans / sacked flags: each item
// counts 1 - sacked - lost + retrans segments); the rest split COUNTED by the truth, from the
// socket's Tx trace (copies sent) and the queue disc's Dequeue, DropBeforeEnqueue and
// DropAfterDequeue traces (copies through or dropped): NET copies still before the queue disc's
// exit or through it within the last 100 ms (at most the base RTT of these dumbbells, so still
// on their way to the receiver or their ACK to the sender); SACKRTX items SACKed that still count
// because their retrans flag was never cleared; DROP1 unSACKed, never-retransmitted items not
// marked lost whose one copy was dropped; DROPRTX retransmitted unSACKed items whose last copy
// was dropped (a lost retransmission); GONE the other counted copies not in the network (through
// the queue disc over 100 ms ago: delivered, not yet SACKed or ACKed); SPUR items marked lost,
// not retransmitted, with a copy still in the network (not counted: spurious marks). CA the
// congestion state (0 open .. 4 loss).
struct PhantomSeg
{
    uint32_t sent = 0;
    uint32_t through = 0;
    uint32_t dropped = 0;
    double lastThrough = -1;
    bool lastDropped = false;
};

struct PhantomFlow
{
    Ptr<TcpSocketBase> sock;
    std::map<uint32_t, PhantomSeg> segs;
    int ca = 0;
};

std::unique_ptr<std::ofstream> g_phantomTrace;
std::vector<PhantomFlow> g_phantomFlows;
// --rtxTrace=FILE (with --phantomTrace): at each of its samples, per flow, the items whose
// retrans flag is set, as segment numbers (SegOf):
//   T FLOW UNA CA UNSACKED SACKED
// UNSACKED and SACKED comma-separated lists ("-" when empty) of the retransmitted items not
// SACKed / SACKed (the latter are what `rtxsack` models: counted by their retrans flag); a
// segment number ends in "n" when no copy of it was dropped at the queue disc and one went
// through (the retransmission was needless, so far).
std::unique_ptr<std::ofstream> g_rtxTrace;

// The flow and first segment of a queue disc item (SegOf's numbering), or flow -1.
std::pair<int64_t, uint32_t>
PhantomSegOf(Ptr<const QueueDiscItem> item)
{
    TcpHeader h;
    Ptr<Packet> p = item->GetPacket()->Copy();
    if (p->PeekHeader(h) > 0 && h.GetDestinationPort() >= 10000 && p->GetSize() > h.GetSerializedSize())
    {
        return {h.GetDestinationPort() - 10000, SegOf(h.GetSequenceNumber())};
    }
    return {-1, 0};
}

void
PhantomSample(double end)
{
    double now = Simulator::Now().GetSeconds();
    for (size_t i = 0; i < g_phantomFlows.size(); i++)
    {
        PhantomFlow& f = g_phantomFlows[i];
        if (!f.sock)
        {
            continue;
        }
        Ptr<TcpTxBuffer> b = f.sock->GetTxBuffer();
        uint32_t una = SegOf(b->HeadSequence());
        f.segs.erase(f.segs.begin(), f.segs.lower_bound(una));
        std::ostringstream os;
        os << *b;
        std::string s = os.str();
        // Items: "{[START;END|SIZE][lost],[retrans],[sacked],[TIME]}"
        double counted = 0, net = 0, sackrtx = 0, drop1 = 0, droprtx = 0, gone = 0, spur = 0;
        std::string rtxUnsacked, rtxSacked;
        size_t pos = 0;
        while ((pos = s.find("{[", pos)) != std::string::npos)
        {
            size_t close = s.find('}', pos);
            std::string it = s.substr(pos, close - pos);
            pos = close;
            uint32_t start = std::stoul(it.substr(2));
            double seg = std::stoul(it.substr(it.find('|') + 1)) / 1460.0;
            bool lost = it.find("[lost]") != std::string::npos;
            bool retrans = it.find("[retrans]") != std::string::npos;
            bool sacked = it.find("[sacked]") != std::string::npos;
            double c = seg * (1.0 - sacked - lost + retrans);
            counted += c;
            auto sit = f.segs.find(SegOf(SequenceNumber32(start)));
            PhantomSeg t = sit == f.segs.end() ? PhantomSeg() : sit->second;
            if (retrans)
            {
                std::string& l = sacked ? rtxSacked : rtxUnsacked;
                l += (l.empty() ? "" : ",") + std::to_string(SegOf(SequenceNumber32(start)));
                if (sit != f.segs.end() && sit->second.dropped == 0 && sit->second.through > 0)
                {
                    l += "n"; // no copy dropped at the queue disc: a needless retransmission
                }
            }
            double pending = double(t.sent) - t.through - t.dropped; // before the queue's exit
            double live = pending + (t.lastThrough >= 0 && now - t.lastThrough < 0.1 &&
                                             !t.lastDropped
                                         ? 1
                                         : 0);
            if (lost && !retrans && !sacked && live > 0)
            {
                spur += seg;
            }
            if (c <= 0)
            {
                continue;
            }
            if (sacked)
            {
                sackrtx += c; // delivered (SACKed), counted by its retrans flag
                continue;
            }
            double in = std::min(c, live * seg);
            net += in;
            double ph = c - in;
            if (ph <= 0)
            {
                continue;
            }
            if (t.lastDropped && !retrans && !lost)
            {
                drop1 += ph;
            }
            else if (t.lastDropped && retrans)
            {
                droprtx += ph;
            }
            else
            {
                gone += ph;
            }
        }
        *g_phantomTrace << now << ' ' << i << ' ' << f.sock->GetTxBuffer()->BytesInFlight() / 1460.0
                        << ' ' << counted << ' ' << net << ' ' << sackrtx << ' ' << drop1 << ' '
                        << droprtx << ' ' << gone << ' ' << spur << ' ' << f.ca << '\n';
        if (g_rtxTrace)
        {
            *g_rtxTrace << now << ' ' << i << ' ' << una << ' ' << f.ca << ' '
                        << (rtxUnsacked.empty() ? "-" : rtxUnsacked) << ' '
                        << (rtxSacked.empty() ? "-" : rtxSacked) << '\n';
        }
    }
    if (now + 0.01 < end)
    {
        Simulator::Schedule(MilliSeconds(10), &PhantomSample, end);
    }
}

// Opens FILE, connects each flow's socket just after its application creates it, follows each
// data copy through the queue disc and starts the 10 ms samples at `from` seconds.
void
PhantomTraceStart(const std::string& path, const std::vector<double>& starts, Ptr<QueueDisc> qdisc,
                  double from, double end)
{
    g_phantomTrace = std::make_unique<std::ofstream>(path);
    g_phantomTrace->precision(6);
    g_phantomFlows.resize(starts.size());
    for (uint32_t i = 0; i < starts.size(); i++)
    {
        Simulator::Schedule(Seconds(starts[i]) + NanoSeconds(3), [i]() {
            Ptr<Socket> so = g_flows[i].app->GetSocket();
            g_phantomFlows[i].sock = DynamicCast<TcpSocketBase>(so);
            so->TraceConnectWithoutContext(
                "Tx",
                MakeBoundCallback(
                    +[](uint32_t k, Ptr<const Packet> p, const TcpHeader& h,
                        Ptr<const TcpSocketBase>) {
                        if (p->GetSize() > 0)
                        {
                            PhantomSeg& t = g_phantomFlows[k].segs[SegOf(h.GetSequenceNumber())];
                            t.sent++;
                            t.lastDropped = false;
                        }
                    },
                    i));
            using State = TcpSocketState::TcpCongState_t;
            so->TraceConnectWithoutContext(
                "CongState",
                MakeBoundCallback(+[](uint32_t k, State, State v) { g_phantomFlows[k].ca = v; },
                                  i));
        });
    }
    auto drop = +[](Ptr<const QueueDiscItem> item, const char*) {
        auto [f, s] = PhantomSegOf(item);
        if (f >= 0 && size_t(f) < g_phantomFlows.size())
        {
            PhantomSeg& t = g_phantomFlows[f].segs[s];
            t.dropped++;
            t.lastDropped = true;
        }
    };
    qdisc->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(drop));
    // A single-queue CoDel's head drop fires "Dequeue" first (the comment at the top): undo its
    // count as through.
    qdisc->TraceConnectWithoutContext(
        "DropAfterDequeue",
        MakeCallback(+[](Ptr<const QueueDiscItem> item, const char*) {
            auto [f, s] = PhantomSegOf(item);
            if (f >= 0 && size_t(f) < g_phantomFlows.size())
            {
                PhantomSeg& t = g_phantomFlows[f].segs[s];
                if (t.through > 0 && t.lastThrough == Simulator::Now().GetSeconds())
                {
                    t.through--;
                    t.lastThrough = -1;
                }
                t.dropped++;
                t.lastDropped = true;
            }
        }));
    qdisc->TraceConnectWithoutContext(
        "Dequeue",
        MakeCallback(+[](Ptr<const QueueDiscItem> item) {
            auto [f, s] = PhantomSegOf(item);
            if (f >= 0 && size_t(f) < g_phantomFlows.size())
            {
                PhantomSeg& t = g_phantomFlows[f].segs[s];
                t.through++;
                t.lastThrough = Simulator::Now().GetSeconds();
            }
        }));
    Simulator::Schedule(Seconds(from), &PhantomSample, end);
}

// --ackTrace=FILE: one line per data segment reaching a receiver and per ACK a receiver sends
// (diagnostics: why ns-3's receivers ACK as often as they do, docs/crosscheck-ns3.md s. 1.8 item 5):
//   T FLOW KIND SEG
// T seconds; FLOW the flow; KIND "data" (a segment arrives: Ipv4L3Protocol's LocalDeliver, before
// TCP sees it; SEG its first segment, 1460 B from 0 as --rtoTrace) or the reason of an ACK (SEG
// the ACK's next expected segment), read from the receive buffer before and after the segment
// that triggered it (tcp-socket-base.cc ReceivedData, IsValidTcpSegment, DelAckTimeout):
//   count: an in-order segment, no gap before or after (the DelAckCount-th since the last ACK);
//   ooo:   the segment starts above RCV.NXT (a gap exists);
//   fill:  the segment advanced RCV.NXT past its own end (it filled a gap);
//   hole:  an in-order segment with out-of-order data still held above it;
//   old:   the segment lies wholly below RCV.NXT (IsValidTcpSegment's out-of-range ACK, or
//          TcpRxBuffer::Add failing in ReceivedData);
//   timer: no segment arrived in this event: DelAckTimeout;
//   other: anything else (a second ACK in one event, a segment without payload).
// The receivers' sockets are the sinks' listening sockets' forks, which copy their "Tx" trace.
struct AckTrace
{
    std::ofstream out;
    std::vector<Ptr<const TcpSocketBase>> sock; // per flow, from its first Tx (the SYN-ACK)
    std::vector<uint64_t> event;                // per flow: the event of the last arrival
    std::vector<uint32_t> seq, len, nxt;        // that arrival's seq and payload, RCV.NXT before
    std::vector<bool> pending;                  // that arrival has not been matched to an ACK
};

std::unique_ptr<AckTrace> g_ackTrace;

void
AckTraceArrival(const Ipv4Header&, Ptr<const Packet> p, uint32_t)
{
    TcpHeader h;
    uint32_t hl = p->PeekHeader(h);
    AckTrace& t = *g_ackTrace;
    if (hl == 0 || h.GetDestinationPort() < 10000 ||
        h.GetDestinationPort() - 10000u >= t.sock.size())
    {
        return;
    }
    uint32_t i = h.GetDestinationPort() - 10000;
    uint32_t len = p->GetSize() - hl;
    t.event[i] = Simulator::GetEventCount();
    t.seq[i] = h.GetSequenceNumber().GetValue();
    t.len[i] = len;
    t.nxt[i] = t.sock[i] ? t.sock[i]->GetRxBuffer()->NextRxSequence().GetValue() : 0;
    t.pending[i] = true;
    if (len > 0)
    {
        t.out << Simulator::Now().GetSeconds() << ' ' << i << " data "
              << SegOf(h.GetSequenceNumber()) << '\n';
    }
}

void
AckTraceTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> so)
{
    AckTrace& t = *g_ackTrace;
    if (h.GetSourcePort() < 10000 || h.GetSourcePort() - 10000u >= t.sock.size())
    {
        return;
    }
    uint32_t i = h.GetSourcePort() - 10000;
    if (!t.sock[i])
    {
        t.sock[i] = so;
    }
    if (p->GetSize() > 0 || (h.GetFlags() & (TcpHeader::SYN | TcpHeader::FIN | TcpHeader::RST)) ||
        !(h.GetFlags() & TcpHeader::ACK))
    {
        return;
    }
    const char* why = "timer";
    if (t.event[i] == Simulator::GetEventCount())
    {
        why = "other";
        if (t.pending[i] && t.len[i] > 0)
        {
            Ptr<TcpRxBuffer> b = so->GetRxBuffer();
            // Sequence numbers compared as ns-3 does (SequenceNumber32: modulo 2^32).
            SequenceNumber32 seq(t.seq[i]), end(t.seq[i] + t.len[i]), nxt0(t.nxt[i]);
            if (end <= nxt0)
            {
                why = "old";
            }
            else if (seq > nxt0)
            {
                why = "ooo";
            }
            else if (b->NextRxSequence() > end)
            {
                why = "fill";
            }
            else if (b->GetSackListSize() > 0)
            {
                why = "hole";
            }
            else
            {
                why = "count";
            }
        }
        t.pending[i] = false;
    }
    t.out << Simulator::Now().GetSeconds() << ' ' << i << ' ' << why << ' '
          << SegOf(h.GetAckNumber()) << '\n';
}

// Opens FILE and hooks every receiver host's local delivery and every sink's listening socket
// (after the sinks start at 0 s).
void
AckTraceConnect(const std::string& file, const Graph& g, const Net& net)
{
    g_ackTrace = std::make_unique<AckTrace>();
    AckTrace& t = *g_ackTrace;
    t.out.open(file);
    t.out.precision(9);
    size_t n = g.flows.size();
    t.sock.resize(n);
    t.event.assign(n, ~uint64_t(0));
    t.seq.assign(n, 0);
    t.len.assign(n, 0);
    t.nxt.assign(n, 0);
    t.pending.assign(n, false);
    std::vector<bool> hooked(g.host.size(), false);
    for (size_t i = 0; i < n; i++)
    {
        uint32_t dst = g.flows[i].dst;
        if (!hooked[dst])
        {
            hooked[dst] = true;
            net.nodes.Get(dst)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                "LocalDeliver",
                MakeCallback(&AckTraceArrival));
        }
        Ptr<PacketSink> sink = g_flows[i].sink;
        Simulator::Schedule(NanoSeconds(1), [sink]() {
            sink->GetListeningSocket()->TraceConnectWithoutContext("Tx", MakeCallback(&AckTraceTx));
        });
    }
}

// --rateTrace=FILE: every rate sample that ns-3's TcpRateLinux hands to a TcpBbr sender, one line
// per ACK (diagnostics; ns3::TcpBbr senders only):
//   T FLOW DELIVERED INTERVAL SEND_EL ACK_EL APPLTD PRIOR_DELIVERED PRIOR_T RATE CONN_DELIVERED BW
// T seconds; DELIVERED bytes over the sample (-1 invalid); INTERVAL, SEND_EL, ACK_EL seconds
// (TcpRateLinux::GenerateSample: interval = max(send, ack elapsed), 0 when below min_rtt);
// APPLTD the app-limited flag; PRIOR_DELIVERED bytes, PRIOR_T seconds, the sample's start
// (TcpRateLinux::SkbDelivered); RATE the sample's m_deliveryRate, bit/s (what TcpBbr::UpdateBtlBw
// feeds its max filter when INTERVAL > 0 and DELIVERED >= 0); CONN_DELIVERED the connection's
// delivered bytes; BW the max-bw estimate after the ACK, from the pacing rate as for --bbrTrace.
// The senders run TcpBbrRateTap, a TcpBbr whose CongControl logs its arguments and then calls
// TcpBbr's: the same model, so the run's summary is unchanged.
std::unique_ptr<std::ofstream> g_rateTrace;

class TcpBbrRateTap : public TcpBbr
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpBbrRateTap")
                                .SetParent<TcpBbr>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpBbrRateTap>();
        return tid;
    }

    /// The flow this sender belongs to (set once its application created the socket).
    int64_t flow = -1;

    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
        TcpBbr::CongControl(tcb, rc, rs);
        double pg = GetPacingGain();
        double pacing = tcb->m_pacingRate.Get().GetBitRate();
        *g_rateTrace << Simulator::Now().GetSeconds() << ' ' << flow << ' ' << rs.m_delivered << ' '
                     << rs.m_interval.GetSeconds() << ' ' << rs.m_sendElapsed.GetSeconds() << ' '
                     << rs.m_ackElapsed.GetSeconds() << ' ' << rs.m_isAppLimited << ' '
                     << rs.m_priorDelivered << ' ' << rs.m_priorTime.GetSeconds() << ' '
                     << rs.m_deliveryRate.GetBitRate() << ' ' << rc.m_delivered << ' '
                     << (pg > 0 ? pacing / (pg * 0.99) : 0) << '\n';
    }
};

NS_OBJECT_ENSURE_REGISTERED(TcpBbrRateTap);

// The TCP congestion control named (--tcp, or a flow line's last field); exits with 2 otherwise.
TypeId
CcType(const std::string& name)
{
    if (name == "newreno")
    {
        return TcpNewReno::GetTypeId();
    }
    if (name == "cubic")
    {
        return TcpCubic::GetTypeId();
    }
    if (name == "dctcp")
    {
        return TcpDctcp::GetTypeId(); // ECN on by itself (DctcpEcn mode, ECT(0))
    }
    if (name == "bbr")
    {
        if (g_rateTrace)
        {
            return TcpBbrRateTap::GetTypeId(); // TcpBbr with its rate samples logged
        }
        return TcpBbr::GetTypeId(); // v1, paced (SetTcpDefaults turns pacing on)
    }
    if (name == "ledbat")
    {
        return TcpLedbat::GetTypeId();
    }
    std::cerr << "tcp: newreno, cubic, dctcp or ledbat, not " << name << "\n";
    std::exit(2);
}

// A sink per flow (its own port) and a BulkSendApplication; traces on the sender's socket once
// its application has created it.
void
InstallFlows(const Graph& g, const Net& net)
{
    const uint16_t base = 10000;
    if (g.flows.size() > 65535u - base)
    {
        std::cerr << "at most " << 65535 - base << " flows\n";
        std::exit(2);
    }
    g_flows.resize(g.flows.size());
    for (uint32_t i = 0; i < g.flows.size(); i++)
    {
        const FlowSpec& fs = g.flows[i];
        uint16_t port = base + i;
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(net.nodes.Get(fs.dst));
        sa.Start(Seconds(0));
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(net.hostAddr[fs.dst], port));
        src.SetAttribute("SendSize", UintegerValue(14600));
        src.SetAttribute("MaxBytes", UintegerValue(fs.size));
        if (!fs.cc.empty())
        {
            // The sender host's sockets (the flow's is created when its application starts).
            net.nodes.Get(fs.src)->GetObject<TcpL4Protocol>()->SetAttribute(
                "SocketType",
                TypeIdValue(CcType(fs.cc)));
        }
        ApplicationContainer ca = src.Install(net.nodes.Get(fs.src));
        ca.Start(Seconds(fs.start));
        FlowRec& f = g_flows[i];
        f.sink = DynamicCast<PacketSink>(sa.Get(0));
        f.app = DynamicCast<BulkSendApplication>(ca.Get(0));
        f.size = fs.size;
        Ptr<BulkSendApplication> app = f.app;
        Simulator::Schedule(Seconds(fs.start) + NanoSeconds(1), [app, i]() {
            Ptr<Socket> so = app->GetSocket();
            so->TraceConnectWithoutContext("CongState", MakeCallback(&CongState));
            so->TraceConnectWithoutContext("RTO", MakeCallback(&Rto));
            so->TraceConnectWithoutContext("Retransmission", MakeCallback(&Retx));
            so->TraceConnectWithoutContext("Tx", MakeBoundCallback(&FlowTx, i));
            if (g_rateTrace)
            {
                PointerValue cc;
                so->GetAttribute("CongestionOps", cc);
                if (auto tap = DynamicCast<TcpBbrRateTap>(cc.Get<TcpCongestionOps>()))
                {
                    tap->flow = i;
                }
            }
            so->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&FlowAck, i));
            if (g_rtoTrace)
            {
                RtoTraceConnect(i, so);
            }
        });
    }
}

void
TraceFlow(const std::string& path, double start, size_t flow)
{
    g_cwnd.open(path);
    Ptr<BulkSendApplication> app0 = g_flows[flow].app;
    Simulator::Schedule(Seconds(start + 1e-6), [app0]() {
        Ptr<Socket> so = app0->GetSocket();
        so->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&CwndTrace));
        so->TraceConnectWithoutContext("CongState", MakeCallback(&CongStateTrace));
        so->TraceConnectWithoutContext("Tx", MakeCallback(&TxTrace));
        so->TraceConnectWithoutContext("Rx", MakeCallback(&RxTrace));
    });
}

// ---------------------------------------------------------------------------------------------
// --probePrr: ns-3's TcpPrrRecovery driven directly through one scripted recovery episode, next to
// RFC 6937's PRR computed here in double precision (no network). RecoverFS = W segments, ssthresh
// = W / 2 (NewReno), one segment lost; every later ACK SACKs one segment (DeliveredData = 1
// segment). The sender sends what each ACK allows (cwnd - pipe, whole segments). Printed per W:
// the segments each side sends over the W - 1 ACKs of the episode, and the first ACK at which
// ns-3's sndcnt differs from RFC 6937's.
void
ProbePrr()
{
    const uint32_t mss = 1460;
    std::printf("{\"prr_probe\": [\n");
    const uint32_t windows[] = {10, 20, 40, 60, 80, 100, 150, 200, 300};
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
    {
        uint32_t W = windows[w];
        Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
        tcb->m_segmentSize = mss;
        tcb->m_ssThresh = W / 2 * mss;
        tcb->m_cWnd = W * mss;
        // Third duplicate ACK: 3 segments SACKed, 1 lost: pipe = W - 4 (RFC 6675).
        tcb->m_bytesInFlight = (W - 4) * mss;
        Ptr<TcpPrrRecovery> prr = CreateObject<TcpPrrRecovery>();
        // ns-3 takes RecoverFS from bytesInFlight at entry; RFC 6937 from FlightSize (W).
        prr->EnterRecovery(tcb, 3, W * mss, 3 * mss);
        double rfcDelivered = 3;
        double rfcOut = 0;
        double rfcPipe = W - 4;
        double recoverFs = W - 4; // the same RecoverFS as ns-3, to isolate the arithmetic
        long sentNs3 = 0;
        long sentRfc = 0;
        int firstDiff = -1;
        for (uint32_t k = 0; k + 4 < W; k++)
        {
            if (k > 0)
            {
                tcb->m_bytesInFlight = tcb->m_bytesInFlight - mss; // one more segment SACKed
                prr->DoRecovery(tcb, mss, true);
                rfcDelivered += 1;
                rfcPipe -= 1;
            }
            int64_t sndNs3 = (int64_t(tcb->m_cWnd) - int64_t(tcb->m_bytesInFlight)) / mss;
            sndNs3 = std::max<int64_t>(sndNs3, 0);
            double ss = W / 2;
            double snd;
            if (rfcPipe > ss)
            {
                snd = std::ceil(rfcDelivered * ss / recoverFs) - rfcOut;
            }
            else
            {
                snd = std::min(ss - rfcPipe, std::max(rfcDelivered - rfcOut, 1.0) + 1);
            }
            snd = std::max(snd, k == 0 ? 1.0 : 0.0);
            if (firstDiff < 0 && double(sndNs3) != snd)
            {
                firstDiff = k;
            }
            tcb->m_bytesInFlight = tcb->m_bytesInFlight + uint32_t(sndNs3) * mss;
            prr->UpdateBytesSent(uint32_t(sndNs3) * mss);
            sentNs3 += sndNs3;
            rfcOut += snd;
            rfcPipe += snd;
            sentRfc += long(snd);
        }
        std::printf("  {\"W\": %u, \"ssthresh\": %u, \"sent_ns3\": %ld, \"sent_rfc6937\": %ld, "
                    "\"first_difference_at_ack\": %d, \"prr_delivered_x_ssthresh_at_end\": %.3e}%s\n",
                    W, W / 2, sentNs3, sentRfc, firstDiff,
                    double(W - 1) * mss * double(W / 2 * mss),
                    w + 1 < sizeof windows / sizeof windows[0] ? "," : "");
    }
    std::printf("], \"uint32_max\": %.3e}\n", 4294967295.0);
}

// ---------------------------------------------------------------------------------------------
// --recovery=prr-rfc: RFC 6937's PRR (PRR-SSRB, s. 3.1; aqmlab's recovery) as an ns-3 recovery
// algorithm, to test ns-3.44's TcpPrrRecovery against it. ns-3.44's version differs in two ways
// (see --probePrr): it adds one segment to DeliveredData on every duplicate ACK although, with
// SACK, ns-3 already passes the SACKed bytes (prr_delivered counts twice), and it computes
// prr_delivered x ssthresh in 32 bits (bytes x bytes), which wraps above 2^32 (windows of ~60
// segments and more). This class uses ns-3's DeliveredData as given and 64-bit arithmetic;
// everything else (the forced fast retransmit, cwnd = pipe + sndcnt) as ns-3's.
class TcpPrrRfc : public TcpClassicRecovery
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpPrrRfc")
                                .SetParent<TcpClassicRecovery>()
                                .AddConstructor<TcpPrrRfc>()
                                .SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "TcpPrrRfc";
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb,
                       uint32_t /*dupAckCount*/,
                       uint32_t /*unAckDataCount*/,
                       uint32_t deliveredBytes) override
    {
        m_out = 0;
        m_delivered = 0;
        m_recoverFs = std::max<uint64_t>(tcb->m_bytesInFlight.Get(), 1); // RFC 6675 pipe
        DoRecovery(tcb, deliveredBytes, true);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool /*isDupAck*/) override
    {
        if (deliveredBytes == 0)
        {
            return;
        }
        m_delivered += deliveredBytes;
        int64_t pipe = tcb->m_bytesInFlight.Get();
        int64_t ssthresh = tcb->m_ssThresh.Get();
        int64_t snd;
        if (pipe > ssthresh)
        {
            // sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
            uint64_t num = m_delivered * uint64_t(ssthresh);
            snd = int64_t((num + m_recoverFs - 1) / m_recoverFs) - int64_t(m_out);
        }
        else
        {
            // PRR-SSRB: MIN(ssthresh - pipe, MAX(prr_delivered - prr_out, DeliveredData) + MSS)
            int64_t limit = std::max<int64_t>(int64_t(m_delivered) - int64_t(m_out), deliveredBytes) +
                            tcb->m_segmentSize;
            snd = std::min<int64_t>(ssthresh - pipe, limit);
        }
        snd = std::max<int64_t>(snd, m_out > 0 ? 0 : tcb->m_segmentSize);
        tcb->m_cWnd = uint32_t(pipe + snd);
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    void ExitRecovery(Ptr<TcpSocketState> tcb) override
    {
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    void UpdateBytesSent(uint32_t bytesSent) override
    {
        m_out += bytesSent;
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<TcpPrrRfc>(this);
    }

  private:
    uint64_t m_delivered = 0;
    uint64_t m_out = 0;
    uint64_t m_recoverFs = 1;
};

NS_OBJECT_ENSURE_REGISTERED(TcpPrrRfc);

// ---------------------------------------------------------------------------------------------
// Options and ns-3 defaults.

struct Options
{
    uint32_t nFlows = 10;
    std::string aqm = "droptail";
    std::string graphFile;
    std::string delaysFile;
    std::string startsFile;
    uint32_t buffer = 300;
    uint32_t accessBuffer = 10000;
    double duration = 60.0;
    double warmup = 10.0;
    uint32_t seed = 1;
    bool timestamps = false;
    bool sack = false;
    bool limitedTransmit = false;
    std::string recovery = "classic";
    std::string tcpCc = "newreno";
    uint32_t minRtoMs = 200;
    uint32_t delAckCount = 1;
    uint32_t delAckTimeoutMs = 200;
    bool hystart = false;
    bool redWait = false;
    bool redEcn = false;
    bool redGentle = false;
    std::string cwndTrace;
    uint32_t cwndTraceFlow = 0;
    std::string rtoTrace;
    std::string dropTrace;
    std::string ackTrace;
    std::string bbrTrace;
    std::string rateTrace;
    std::string phantomTrace;
    std::string rtxTrace;
    double minTh = 50;
    double maxTh = 150;
    double maxP = 0.1;
    double wQ = 0.002;
    uint32_t meanPktSize = 1500;
    double codelTargetMs = 5;
    double codelIntervalMs = 100;
    uint32_t codelMinBytes = 1500;
    double pieTargetMs = 15;
    double pieTupdateMs = 15;
    double pieA = 0.125;
    double pieB = 1.25;
    double pieMaxBurstMs = 150;
    bool pieDqRate = false;
    bool pieCapDrop = true;
    bool pieDerandomize = false;
    bool probePrr = false;
    uint32_t mtu = 1600;
    uint32_t fqQuantum = 0;
};

void
Parse(Options& o, int argc, char* argv[])
{
    CommandLine cmd(__FILE__);
    cmd.AddValue("graph", "network file (nodes, links, flows; see the header comment)", o.graphFile);
    cmd.AddValue("flows", "dumbbell: number of flows", o.nFlows);
    cmd.AddValue("aqm", "dumbbell: droptail | red | codel | pie", o.aqm);
    cmd.AddValue("delays", "dumbbell: file of access delays per flow (ms)", o.delaysFile);
    cmd.AddValue("starts", "dumbbell: file of start times per flow (s)", o.startsFile);
    cmd.AddValue("buffer", "dumbbell: bottleneck queue disc limit, packets", o.buffer);
    cmd.AddValue("accessBuffer", "dumbbell: access queue disc limit, packets", o.accessBuffer);
    cmd.AddValue("duration", "simulated seconds", o.duration);
    cmd.AddValue("warmup", "seconds before measuring", o.warmup);
    cmd.AddValue("seed", "ns-3 run number", o.seed);
    cmd.AddValue("timestamps", "TCP timestamps option (ns-3's default true)", o.timestamps);
    cmd.AddValue("sack", "TCP SACK option (ns-3's default true)", o.sack);
    cmd.AddValue("limitedTransmit", "RFC 3042 limited transmit (ns-3's default true)",
                 o.limitedTransmit);
    cmd.AddValue("recovery", "classic | prr (ns-3's default) | prr-rfc (RFC 6937, below)", o.recovery);
    cmd.AddValue("tcp",
                 "newreno | cubic (ns3::TcpCubic: beta 0.7, C 0.4, fast convergence) | dctcp | ledbat"
                 " | bbr (ns3::TcpBbr, v1, paced)",
                 o.tcpCc);
    cmd.AddValue("redEcn", "RED marks ECT packets: UseEcn on, UseHardDrop off", o.redEcn);
    cmd.AddValue("minRto", "TCP minimum RTO, ms (ns-3's default is 1000; aqmlab's 200)", o.minRtoMs);
    cmd.AddValue("delAck", "TCP DelAckCount (1: an ACK per segment; ns-3's default 2)", o.delAckCount);
    cmd.AddValue("delAckTimeout", "TCP DelAckTimeout, ms (ns-3's default 200)", o.delAckTimeoutMs);
    cmd.AddValue("hystart", "TcpCubic HyStart (ns-3's default true; aqmlab has none)", o.hystart);
    cmd.AddValue("redWait", "RED Wait (ns-3's default true)", o.redWait);
    cmd.AddValue("redGentle", "RED Gentle (ns-3's default true)", o.redGentle);
    cmd.AddValue("cwndTrace", "file for the cwnd trace of flow --cwndTraceFlow (diagnostics)", o.cwndTrace);
    cmd.AddValue("cwndTraceFlow", "the flow --cwndTrace follows (default 0)", o.cwndTraceFlow);
    cmd.AddValue("rtoTrace", "file for a line per timeout and fast recovery (diagnostics)", o.rtoTrace);
    cmd.AddValue("dropTrace",
                 "file for a line per drop at the first monitored queue disc (diagnostics)",
                 o.dropTrace);
    cmd.AddValue("ackTrace", "file for a line per receiver arrival and ACK, with its reason", o.ackTrace);
    cmd.AddValue("bbrTrace", "file for every TcpBbr sender's state each 10 ms (diagnostics)",
                 o.bbrTrace);
    cmd.AddValue("rateTrace", "file for every rate sample of a TcpBbr sender, per ACK (diagnostics)",
                 o.rateTrace);
    cmd.AddValue("phantomTrace",
                 "file for every sender's sent list against the queue disc's drops each 10 ms "
                 "from the warmup (diagnostics)",
                 o.phantomTrace);
    cmd.AddValue("rtxTrace",
                 "file for every sender's retransmitted items each --phantomTrace sample "
                 "(diagnostics)",
                 o.rtxTrace);
    cmd.AddValue("minTh", "RED min_th, packets", o.minTh);
    cmd.AddValue("maxTh", "RED max_th, packets", o.maxTh);
    cmd.AddValue("maxP", "RED max_p (LInterm = 1 / max_p)", o.maxP);
    cmd.AddValue("wQ", "RED w_q", o.wQ);
    cmd.AddValue("meanPktSize", "RED / PIE MeanPktSize, bytes", o.meanPktSize);
    cmd.AddValue("codelTarget", "CoDel Target, ms", o.codelTargetMs);
    cmd.AddValue("codelInterval", "CoDel Interval, ms", o.codelIntervalMs);
    cmd.AddValue("codelMinBytes", "CoDel MinBytes", o.codelMinBytes);
    cmd.AddValue("pieTarget", "PIE QueueDelayReference, ms", o.pieTargetMs);
    cmd.AddValue("pieTupdate", "PIE Tupdate, ms", o.pieTupdateMs);
    cmd.AddValue("pieA", "PIE A (alpha)", o.pieA);
    cmd.AddValue("pieB", "PIE B (beta)", o.pieB);
    cmd.AddValue("pieMaxBurst", "PIE MaxBurstAllowance, ms", o.pieMaxBurstMs);
    cmd.AddValue("pieDqRate", "PIE UseDequeueRateEstimator", o.pieDqRate);
    cmd.AddValue("pieCapDrop", "PIE UseCapDropAdjustment", o.pieCapDrop);
    cmd.AddValue("pieDerandomize", "PIE UseDerandomization", o.pieDerandomize);
    cmd.AddValue("mtu", "every device's Mtu, bytes (ns-3's default 1500 would fragment the 1512-byte "
                 "segments of TCP with timestamps into two IP packets)", o.mtu);
    cmd.AddValue("fqQuantum", "DRR quantum of FqCoDel, FqPie and FqCobalt, bytes (0: ns-3's rule, "
                 "the device's Mtu, 1600 here)", o.fqQuantum);
    cmd.AddValue("probePrr", "run the TcpPrrRecovery probe instead of a network", o.probePrr);
    cmd.Parse(argc, argv);
}

void
SetTcpDefaults(const Options& o)
{
    if (!o.rateTrace.empty())
    {
        g_rateTrace = std::make_unique<std::ofstream>(o.rateTrace);
        g_rateTrace->precision(9);
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(CcType(o.tcpCc)));
    if (o.tcpCc == "bbr")
    {
        // BBR paces (ns-3's TcpBbr, as Linux's tcp_bbr.c, needs pacing on).
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }
    TypeId recovery = TcpClassicRecovery::GetTypeId();
    if (o.recovery == "prr")
    {
        recovery = TcpPrrRecovery::GetTypeId();
    }
    else if (o.recovery == "prr-rfc")
    {
        recovery = TcpPrrRfc::GetTypeId();
    }
    else if (o.recovery != "classic")
    {
        std::cerr << "--recovery: classic, prr or prr-rfc, not " << o.recovery << "\n";
        std::exit(2);
    }
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(recovery));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(o.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(o.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(o.limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(o.minRtoMs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(o.delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(o.delAckTimeoutMs)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(o.hystart));
}

void
SetAqmDefaults(const Options& o)
{
    // RED: every ns-3 default that differs from the RED aqmlab runs is overridden.
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(o.minTh));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(o.maxTh));
    Config::SetDefault("ns3::RedQueueDisc::LInterm", DoubleValue(1.0 / o.maxP)); // default 50
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(o.wQ));
    Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(o.redGentle)); // default true
    Config::SetDefault("ns3::RedQueueDisc::Wait", BooleanValue(o.redWait));     // default true
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(o.meanPktSize));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(!o.redEcn));
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(o.redEcn));

    // CoDel: the values are ns-3.44's defaults too, except MaxSize (1500000B by default).
    Config::SetDefault("ns3::CoDelQueueDisc::Target", TimeValue(MicroSeconds(o.codelTargetMs * 1e3)));
    Config::SetDefault("ns3::CoDelQueueDisc::Interval",
                       TimeValue(MicroSeconds(o.codelIntervalMs * 1e3)));
    Config::SetDefault("ns3::CoDelQueueDisc::MinBytes", UintegerValue(o.codelMinBytes));
    Config::SetDefault("ns3::CoDelQueueDisc::UseEcn", BooleanValue(false));
    Config::SetDefault("ns3::CoDelQueueDisc::UseL4s", BooleanValue(false));

    // PIE: ns-3.44's defaults are these values too, except MaxSize 25p and MeanPktSize 1000,
    // which only matters for a byte-limited queue.
    Config::SetDefault("ns3::PieQueueDisc::QueueDelayReference",
                       TimeValue(MicroSeconds(o.pieTargetMs * 1e3)));
    Config::SetDefault("ns3::PieQueueDisc::Tupdate", TimeValue(MicroSeconds(o.pieTupdateMs * 1e3)));
    Config::SetDefault("ns3::PieQueueDisc::A", DoubleValue(o.pieA));
    Config::SetDefault("ns3::PieQueueDisc::B", DoubleValue(o.pieB));
    Config::SetDefault("ns3::PieQueueDisc::MaxBurstAllowance",
                       TimeValue(MicroSeconds(o.pieMaxBurstMs * 1e3)));
    Config::SetDefault("ns3::PieQueueDisc::UseDequeueRateEstimator", BooleanValue(o.pieDqRate));
    Config::SetDefault("ns3::PieQueueDisc::UseCapDropAdjustment", BooleanValue(o.pieCapDrop));
    Config::SetDefault("ns3::PieQueueDisc::UseDerandomization", BooleanValue(o.pieDerandomize));
    Config::SetDefault("ns3::PieQueueDisc::UseEcn", BooleanValue(false));
    Config::SetDefault("ns3::PieQueueDisc::UseL4s", BooleanValue(false));
    Config::SetDefault("ns3::PieQueueDisc::MeanPktSize", UintegerValue(o.meanPktSize));
}

Graph
LoadGraph(const Options& o)
{
    if (!o.graphFile.empty())
    {
        return ReadGraph(o.graphFile);
    }
    std::vector<double> delays = ReadNumbers(o.delaysFile);
    std::vector<double> starts = ReadNumbers(o.startsFile);
    if (delays.size() != o.nFlows || starts.size() != o.nFlows)
    {
        std::cerr << "need " << o.nFlows << " delays and starts, got " << delays.size() << " and "
                  << starts.size() << "\n";
        std::exit(2);
    }
    return DumbbellGraph(delays, starts, o.buffer, o.accessBuffer, o.aqm);
}

// Per-flow goodput (window), completion time and first-data time as JSON arrays.
void
PrintFlows(double T)
{
    double sum = 0;
    double sum2 = 0;
    size_t bulk = 0;
    std::ostringstream gp;
    std::ostringstream fct;
    std::ostringstream first;
    gp.precision(10);
    fct.precision(9);
    first.precision(9);
    for (size_t i = 0; i < g_flows.size(); i++)
    {
        const FlowRec& f = g_flows[i];
        double g = (f.sink->GetTotalRx() - f.rxAtWarmup) * 8.0 / T;
        gp << (i ? ", " : "") << g;
        if (f.size == 0)
        {
            sum += g;
            sum2 += g * g;
            bulk++;
        }
        fct << (i ? ", " : "");
        first << (i ? ", " : "");
        if (f.done >= 0 && f.firstData >= 0)
        {
            fct << f.done - f.firstData;
        }
        else
        {
            fct << "null";
        }
        first << (f.firstData >= 0 ? f.firstData : -1.0);
    }
    double total = 0;
    for (const FlowRec& f : g_flows)
    {
        total += (f.sink->GetTotalRx() - f.rxAtWarmup) * 8.0 / T;
    }
    std::printf("  \"jain\": %.6f,\n", sum2 > 0 ? sum * sum / (bulk * sum2) : 0.0);
    std::printf("  \"goodput_total_bps\": %.1f,\n", total);
    std::printf("  \"goodput_bps\": [%s],\n", gp.str().c_str());
    std::printf("  \"fct_s\": [%s],\n", fct.str().c_str());
    std::printf("  \"first_data_s\": [%s],\n", first.str().c_str());
}

} // namespace

int
main(int argc, char* argv[])
{
    auto t0 = std::chrono::steady_clock::now();
    Options o;
    Parse(o, argc, argv);
    if (o.probePrr)
    {
        ProbePrr();
        return 0;
    }
    g_warmup = o.warmup;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(o.seed);
    SetTcpDefaults(o);
    SetAqmDefaults(o);

    Graph g = LoadGraph(o);
    Net net = BuildNetwork(g, o.mtu);
    if (o.fqQuantum > 0)
    {
        // Before the queue discs' CheckConfig, which sets the quantum only when it is 0.
        for (auto& q : net.qdisc)
        {
            if (auto c = DynamicCast<FqCoDelQueueDisc>(q))
            {
                c->SetQuantum(o.fqQuantum);
            }
            else if (auto p = DynamicCast<FqPieQueueDisc>(q))
            {
                p->SetQuantum(o.fqQuantum);
            }
            else if (auto b = DynamicCast<FqCobaltQueueDisc>(q))
            {
                b->SetQuantum(o.fqQuantum);
            }
        }
    }
    if (!o.rtoTrace.empty())
    {
        g_rtoTrace = std::make_unique<RtoTrace>();
        g_rtoTrace->out.open(o.rtoTrace);
        size_t n = g.flows.size();
        g_rtoTrace->sent.resize(n);
        for (auto* v : {&g_rtoTrace->state, &g_rtoTrace->cwnd, &g_rtoTrace->ssthresh,
                        &g_rtoTrace->recoveries, &g_rtoTrace->high})
        {
            v->assign(n, 0);
        }
        g_rtoTrace->sock.resize(n);
    }
    InstallFlows(g, net);
    if (!o.ackTrace.empty())
    {
        AckTraceConnect(o.ackTrace, g, net);
    }
    if (!o.cwndTrace.empty() && o.cwndTraceFlow < g_flows.size())
    {
        TraceFlow(o.cwndTrace, g.flows[o.cwndTraceFlow].start, o.cwndTraceFlow);
    }

    std::vector<std::unique_ptr<Monitor>> mons;
    for (size_t i = 0; i < g.links.size(); i++)
    {
        if (!g.links[i].monitor)
        {
            continue;
        }
        auto m = std::make_unique<Monitor>();
        m->name = g.links[i].name;
        m->aqm = g.links[i].aqm;
        m->rateBps = g.links[i].rateBps;
        m->qdisc = net.qdisc[i];
        m->Connect(DynamicCast<PointToPointNetDevice>(net.dev[i]));
        mons.push_back(std::move(m));
    }
    if (mons.empty())
    {
        std::cerr << "no monitored link\n";
        return 2;
    }
    if (!o.dropTrace.empty())
    {
        g_dropTrace = std::make_unique<std::ofstream>(o.dropTrace);
        g_dropTrace->precision(9);
        mons[0]->qdisc->TraceConnectWithoutContext(
            "DropBeforeEnqueue",
            MakeCallback(+[](Ptr<const QueueDiscItem> i, const char* r) {
                DropTraceLine("enq", i, r);
            }));
        mons[0]->qdisc->TraceConnectWithoutContext(
            "DropAfterDequeue",
            MakeCallback(+[](Ptr<const QueueDiscItem> i, const char* r) {
                DropTraceLine("deq", i, r);
            }));
    }

    if (!o.bbrTrace.empty())
    {
        std::vector<double> starts;
        for (const FlowSpec& fs : g.flows)
        {
            starts.push_back(fs.start);
        }
        BbrTraceStart(o.bbrTrace, starts, mons[0]->qdisc, o.duration);
    }
    if (!o.phantomTrace.empty())
    {
        std::vector<double> starts;
        for (const FlowSpec& fs : g.flows)
        {
            starts.push_back(fs.start);
        }
        if (!o.rtxTrace.empty())
        {
            g_rtxTrace = std::make_unique<std::ofstream>(o.rtxTrace);
            g_rtxTrace->precision(6);
        }
        PhantomTraceStart(o.phantomTrace, starts, mons[0]->qdisc, o.warmup, o.duration);
    }
    Simulator::Schedule(Seconds(o.warmup), [&]() {
        for (auto& m : mons)
        {
            m->atWarmup = TakeQ(m->qdisc, m->aqm);
        }
        for (FlowRec& f : g_flows)
        {
            f.rxAtWarmup = f.sink->GetTotalRx();
        }
    });
    Simulator::Stop(Seconds(o.duration));

    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();
    const double T = o.duration - o.warmup;
    for (auto& m : mons)
    {
        m->qdiscQ.Advance(o.duration);
        m->devQ.Advance(o.duration);
        m->dropping.Advance(o.duration);
    }

    std::printf("{\n");
    std::printf("  \"ns3_version\": \"3.44\",\n");
    std::printf("  \"flows\": %zu, \"aqm\": \"%s\", \"timestamps\": %s,\n",
                g_flows.size(), mons[0]->aqm.c_str(), o.timestamps ? "true" : "false");
    std::printf("  %s,\n", mons[0]->Json(T).c_str());
    std::printf("  \"links\": [");
    for (size_t i = 0; i < mons.size(); i++)
    {
        std::printf("%s{%s}", i ? ",\n   " : "", mons[i]->Json(T).c_str());
    }
    std::printf("],\n");
    std::printf("  \"fast_recoveries\": %lu, \"timeouts\": %lu, \"retransmits\": %lu,\n",
                (unsigned long)g_recoveries[0], (unsigned long)g_rtos[0], (unsigned long)g_retx[0]);
    std::printf("  \"fast_recoveries_window\": %lu, \"timeouts_window\": %lu, "
                "\"retransmits_window\": %lu,\n",
                (unsigned long)g_recoveries[1], (unsigned long)g_rtos[1], (unsigned long)g_retx[1]);
    PrintFlows(T);
    Simulator::Destroy();
    auto t3 = std::chrono::steady_clock::now();
    auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    std::printf("  \"wall_setup_s\": %.3f, \"wall_run_s\": %.3f, \"wall_total_s\": %.3f\n",
                secs(t0, t1), secs(t1, t2), secs(t0, t3));
    std::printf("}\n");
    return 0;
}
