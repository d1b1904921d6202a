// The one ns-3 program of aqmlab's cross-checks (scripts/crosscheck_ns3.py: DropTail and RED;
// scripts/crosscheck_ns3_codel.py: CoDel and PIE; the TCP runs of docs/crosscheck-ns3.md, section
// "SACK, PRR and CUBIC"). It replaced two near-copies (ns3_dumbbell.cc and ns3_dumbbell_aqm.cc).
//
// Options beyond the network: --tcp=newreno|cubic, --sack, --recovery=classic|prr, --timestamps,
// --limitedTransmit, --minRto (ms), --delAck (DelAckCount), --redWait, --redGentle, and the AQMs'
// parameters. Defaults are aqmlab's model (NewReno, classic recovery, SACK and timestamps off,
// DelAckCount 1, MinRto 200 ms, RED Wait and Gentle off); ns-3's own defaults are TcpCubic, PRR,
// SACK, timestamps, DelAckCount 2, MinRto 1 s, RED Wait and Gentle on.
//
// AQMs:
//   --aqm=droptail: FifoQueueDisc; --aqm=red: RedQueueDisc (MinTh, MaxTh, LInterm, QW, Wait, Gentle);
//   --aqm=codel: CoDelQueueDisc (Target, Interval, MinBytes, MaxSize; UseEcn false), and
//   --aqm=pie:   PieQueueDisc (QueueDelayReference, Tupdate, A, B, MaxBurstAllowance, MaxSize,
//                UseDequeueRateEstimator, UseCapDropAdjustment, UseDerandomization; UseEcn false),
// and with the queueing delay of the bottleneck queue disc:
//   sojourn: enqueue to dequeue of the queue disc (QueueDisc "Dequeue" trace, now - the item's
//     timestamp), over the packets dequeued in the window and NOT dropped by the AQM after
//     dequeue (CoDel's head drops also fire "Dequeue"; their "DropAfterDequeue" takes them out
//     again); the mean sojourn of the head-dropped packets is reported separately;
//   to_tx: queue-disc enqueue to the start of the packet's transmission on the bottleneck device
//     (PhyTxBegin), i.e. sojourn + the wait in the 1-packet device queue: aqmlab's definition of
//     queueing delay (arrival to start of transmission, packets starting in the window).
// CoDel's dropping state is traced (DropState): entries and the time fraction spent in it.
//
// Builds the dumbbell of one scenarios/crosscheck/*.toml case in ns-3 (3.44, the `ns3` wheel from
// PyPI: its shipped headers and libraries) and prints one JSON object with the bottleneck's
// utilisation, time-weighted mean queue, queueing delay, loss ratio, per-flow goodput and
// wall-clock times.
//
// Network: N sender hosts S_i -- router A ==(bottleneck)== router B -- N receiver hosts R_i.
//   access links: 1 Gb/s, one-way delay d_i (the same d_i on S_i-A and B-R_i, as aqmlab's dumbbell);
//   bottleneck:   100 Mb/s, 2 ms one-way, both directions.
// Queues: every point-to-point device's own TxQueue is 1 packet, so the traffic-control queue disc
// holds the queue: on A's bottleneck device CoDelQueueDisc, PieQueueDisc, RedQueueDisc or
// FifoQueueDisc ("droptail") with MaxSize = buffer packets; on B's (reverse) device FifoQueueDisc buffer packets; on every access
// device FifoQueueDisc 10000 packets (aqmlab's access_buffer). Installed before addresses are
// assigned, so Ipv4AddressHelper installs no default (FqCoDel) queue disc.
// TCP (defaults; see the options above): TcpNewReno with TcpClassicRecovery, SACK off,
// timestamps off (default; --timestamps=1 turns them on), limited transmit off, DelAckCount 1,
// SegmentSize 1460, InitialCwnd 10, MinRto 200 ms, ClockGranularity 1 ms, 4 MB socket buffers,
// DataRetries 1000 (ns-3 would otherwise abort a connection after 6 back-to-back RTOs),
// ConnTimeout 1 s (aqmlab's init_rto). Bulk flows (BulkSendApplication) start at the times given.
//
// Measurement window [warmup, duration]:
//   utilisation: bytes on the wire (IP packet + 2-byte PPP header) whose transmission on the
//     bottleneck ended in the window / (C T); throughput_bps: the same without the PPP header;
//   queue: time-weighted mean of the queue disc's PacketsInQueue (qdisc_mean) and of the device
//     TxQueue's (devq_mean), integrated exactly from their traces. qdisc + devq = packets waiting,
//     excluding the one in transmission (aqmlab's convention);
//   loss: (drops of the queue disc) / (packets the queue disc received) in the window;
//   goodput: PacketSink bytes received in the window * 8 / T.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <cmath>
#include <sstream>
#include <string>
#include <deque>
#include <vector>

using namespace ns3;

namespace
{

double g_warmup = 10.0;

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

Integrator g_qdisc;
Integrator g_devq;
Integrator g_dropping;  // CoDel's dropping state (0/1): time fraction in the window

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
};

DelaySum g_sojourn;       // queue disc: enqueue -> dequeue, packets not dropped after dequeue
DelaySum g_sojournDrop;   // the same for packets the AQM dropped after dequeue (CoDel)
DelaySum g_toTx;          // queue disc enqueue -> start of transmission
// Queue-disc enqueue times of the packets dequeued from the queue disc and not yet started on the
// device, in order. The queue disc and the device queue are FIFOs, so the front is the next packet
// PhyTxBegin sees. (Packet uids cannot pair them: ns-3's TCP cuts its segments from the
// application's 14600-byte writes, and the fragments keep the uid of the write.)
std::deque<double> g_pending;
uint64_t g_pairingErrors = 0;       // PhyTxBegin without a dequeued packet (should stay 0)
uint64_t g_dropStates[2] = {0, 0};  // CoDel entries into the dropping state: run, window

bool
InWindow()
{
    return Simulator::Now().GetSeconds() >= g_warmup;
}

void
QdiscDequeue(Ptr<const QueueDiscItem> item)
{
    g_pending.push_back(item->GetTimeStamp().GetSeconds());
    if (InWindow())
    {
        g_sojourn.Add((Simulator::Now() - item->GetTimeStamp()).GetSeconds());
    }
}

void
QdiscDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* /*reason*/)
{
    // "Dequeue" fired for this packet at this same instant: take it out of the sent packets.
    if (InWindow())
    {
        double d = (Simulator::Now() - item->GetTimeStamp()).GetSeconds();
        g_sojourn.Add(d, -1);
        g_sojournDrop.Add(d);
    }
    // The drop follows the "Dequeue" of this same packet at once: it is the last one pushed.
    g_pending.pop_back();
}

void
PhyTxBegin(Ptr<const Packet>)
{
    if (g_pending.empty())
    {
        g_pairingErrors++;
        return;
    }
    if (InWindow())
    {
        g_toTx.Add(Simulator::Now().GetSeconds() - g_pending.front());
    }
    g_pending.pop_front();
}

void
DropState(bool from, bool to)
{
    g_dropping.Change(from, to);
    if (to && !from)
    {
        g_dropStates[0]++;
        if (InWindow())
        {
            g_dropStates[1]++;
        }
    }
}
uint64_t g_tx_pkts_window = 0;
uint64_t g_tx_wire_bytes_window = 0;
uint64_t g_tx_pkts_total = 0;
// TCP events of all senders: [0] whole run, [1] measurement window only.
uint64_t g_recoveries[2] = {0, 0};  // entries into fast recovery
uint64_t g_rtos[2] = {0, 0};        // retransmission timeouts (every expiry, backoffs included)
uint64_t g_retx[2] = {0, 0};        // retransmitted data segments
std::ofstream g_cwnd;

void
Count(uint64_t* c)
{
    c[0]++;
    if (Simulator::Now().GetSeconds() >= g_warmup)
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

void
PhyTxEnd(Ptr<const Packet> p)
{
    g_tx_pkts_total++;
    if (Simulator::Now().GetSeconds() >= g_warmup)
    {
        g_tx_pkts_window++;
        g_tx_wire_bytes_window += p->GetSize();
    }
}

struct Snapshot
{
    uint64_t received = 0;
    uint64_t dropped = 0;
    uint64_t early = 0;
    uint64_t forced = 0;
    uint64_t overflow = 0;
    std::vector<uint64_t> rx;
};

Snapshot
Take(Ptr<QueueDisc> q, const std::string& aqm, const std::vector<Ptr<PacketSink>>& sinks)
{
    Snapshot s;
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
    else
    {
        s.overflow = st.GetNDroppedPackets(FifoQueueDisc::LIMIT_EXCEEDED_DROP);
    }
    for (auto& k : sinks)
    {
        s.rx.push_back(k->GetTotalRx());
    }
    return s;
}

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

} // namespace

int
main(int argc, char* argv[])
{
    auto t0 = std::chrono::steady_clock::now();
    uint32_t nFlows = 10;
    std::string aqm = "droptail";
    std::string delaysFile;  // one-way access delay per flow, ms, one a line
    std::string startsFile;  // start time per flow, s, one a line
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
    bool redWait = false;
    bool redGentle = false;
    std::string cwndTrace;  // diagnostics: file for flow 0's cwnd and congestion state changes
    double minTh = 50;
    double maxTh = 150;
    double maxP = 0.1;
    double wQ = 0.002;
    uint32_t meanPktSize = 1500;
    // CoDel (ns-3 attribute names in the comments).
    double codelTargetMs = 5;       // Target
    double codelIntervalMs = 100;   // Interval
    uint32_t codelMinBytes = 1500;  // MinBytes (ns-3's default; Linux/RFC maxpacket)
    // PIE.
    double pieTargetMs = 15;         // QueueDelayReference
    double pieTupdateMs = 15;        // Tupdate
    double pieA = 0.125;             // A
    double pieB = 1.25;              // B
    double pieMaxBurstMs = 150;      // MaxBurstAllowance
    bool pieDqRate = false;          // UseDequeueRateEstimator (false: timestamps)
    bool pieCapDrop = true;          // UseCapDropAdjustment
    bool pieDerandomize = false;     // UseDerandomization

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of flows", nFlows);
    cmd.AddValue("aqm", "droptail | red | codel | pie", aqm);
    cmd.AddValue("delays", "file of access delays per flow (ms)", delaysFile);
    cmd.AddValue("starts", "file of start times per flow (s)", startsFile);
    cmd.AddValue("buffer", "bottleneck queue disc limit, packets", buffer);
    cmd.AddValue("accessBuffer", "access queue disc limit, packets", accessBuffer);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds before measuring", warmup);
    cmd.AddValue("seed", "ns-3 run number", seed);
    cmd.AddValue("timestamps", "TCP timestamps option", timestamps);
    cmd.AddValue("sack", "TCP SACK option (diagnostics; the cross-check uses off)", sack);
    cmd.AddValue("limitedTransmit", "RFC 3042 limited transmit (diagnostics)", limitedTransmit);
    cmd.AddValue("recovery", "classic | prr (diagnostics)", recovery);
    cmd.AddValue("tcp", "newreno | cubic (ns3::TcpCubic: beta 0.7, C 0.4, fast convergence)", tcpCc);
    cmd.AddValue("minRto", "TCP minimum RTO, ms (ns-3's default is 1000; aqmlab's 200)", minRtoMs);
    cmd.AddValue("delAck", "TCP DelAckCount (1: an ACK per segment; ns-3's default 2)", delAckCount);
    cmd.AddValue("redWait", "RED Wait (ns-3's default true)", redWait);
    cmd.AddValue("redGentle", "RED Gentle (ns-3's default true)", redGentle);
    cmd.AddValue("cwndTrace", "file for flow 0's cwnd trace (diagnostics)", cwndTrace);
    cmd.AddValue("minTh", "RED min_th, packets", minTh);
    cmd.AddValue("maxTh", "RED max_th, packets", maxTh);
    cmd.AddValue("maxP", "RED max_p (LInterm = 1 / max_p)", maxP);
    cmd.AddValue("wQ", "RED w_q", wQ);
    cmd.AddValue("meanPktSize", "RED / PIE MeanPktSize, bytes", meanPktSize);
    cmd.AddValue("codelTarget", "CoDel Target, ms", codelTargetMs);
    cmd.AddValue("codelInterval", "CoDel Interval, ms", codelIntervalMs);
    cmd.AddValue("codelMinBytes", "CoDel MinBytes", codelMinBytes);
    cmd.AddValue("pieTarget", "PIE QueueDelayReference, ms", pieTargetMs);
    cmd.AddValue("pieTupdate", "PIE Tupdate, ms", pieTupdateMs);
    cmd.AddValue("pieA", "PIE A (alpha)", pieA);
    cmd.AddValue("pieB", "PIE B (beta)", pieB);
    cmd.AddValue("pieMaxBurst", "PIE MaxBurstAllowance, ms", pieMaxBurstMs);
    cmd.AddValue("pieDqRate", "PIE UseDequeueRateEstimator", pieDqRate);
    cmd.AddValue("pieCapDrop", "PIE UseCapDropAdjustment", pieCapDrop);
    cmd.AddValue("pieDerandomize", "PIE UseDerandomization", pieDerandomize);
    cmd.Parse(argc, argv);
    g_warmup = warmup;

    std::vector<double> delays = ReadNumbers(delaysFile);
    std::vector<double> starts = ReadNumbers(startsFile);
    if (delays.size() != nFlows || starts.size() != nFlows)
    {
        std::cerr << "need " << nFlows << " delays and starts, got " << delays.size() << " and "
                  << starts.size() << "\n";
        return 2;
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // TCP: NewReno as aqmlab models it.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(tcpCc == "cubic" ? TcpCubic::GetTypeId()
                                                    : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));

    // RED: override every ns-3 default that differs from the Floyd-Jacobson RED aqmlab runs.
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(minTh));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(maxTh));
    Config::SetDefault("ns3::RedQueueDisc::LInterm", DoubleValue(1.0 / maxP));     // default 50
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(wQ));
    Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(redGentle));      // default true
    Config::SetDefault("ns3::RedQueueDisc::Wait", BooleanValue(redWait));          // default true
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(meanPktSize)); // default 500
    Config::SetDefault("ns3::RedQueueDisc::LinkBandwidth", DataRateValue(DataRate("100Mbps")));
    Config::SetDefault("ns3::RedQueueDisc::LinkDelay", TimeValue(MilliSeconds(2)));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(false));

    // CoDel: every attribute that matters here set explicitly (the values are ns-3.44's defaults
    // too, except MaxSize, 1500000B by default).
    Config::SetDefault("ns3::CoDelQueueDisc::Target", TimeValue(MicroSeconds(codelTargetMs * 1e3)));
    Config::SetDefault("ns3::CoDelQueueDisc::Interval",
                       TimeValue(MicroSeconds(codelIntervalMs * 1e3)));
    Config::SetDefault("ns3::CoDelQueueDisc::MinBytes", UintegerValue(codelMinBytes));
    Config::SetDefault("ns3::CoDelQueueDisc::UseEcn", BooleanValue(false));
    Config::SetDefault("ns3::CoDelQueueDisc::UseL4s", BooleanValue(false));

    // PIE (ns-3.44's defaults are these values too, except MaxSize 25p and MeanPktSize 1000,
    // which only matters for a byte-limited queue).
    Config::SetDefault("ns3::PieQueueDisc::QueueDelayReference",
                       TimeValue(MicroSeconds(pieTargetMs * 1e3)));
    Config::SetDefault("ns3::PieQueueDisc::Tupdate", TimeValue(MicroSeconds(pieTupdateMs * 1e3)));
    Config::SetDefault("ns3::PieQueueDisc::A", DoubleValue(pieA));
    Config::SetDefault("ns3::PieQueueDisc::B", DoubleValue(pieB));
    Config::SetDefault("ns3::PieQueueDisc::MaxBurstAllowance",
                       TimeValue(MicroSeconds(pieMaxBurstMs * 1e3)));
    Config::SetDefault("ns3::PieQueueDisc::UseDequeueRateEstimator", BooleanValue(pieDqRate));
    Config::SetDefault("ns3::PieQueueDisc::UseCapDropAdjustment", BooleanValue(pieCapDrop));
    Config::SetDefault("ns3::PieQueueDisc::UseDerandomization", BooleanValue(pieDerandomize));
    Config::SetDefault("ns3::PieQueueDisc::UseEcn", BooleanValue(false));
    Config::SetDefault("ns3::PieQueueDisc::UseL4s", BooleanValue(false));
    Config::SetDefault("ns3::PieQueueDisc::MeanPktSize", UintegerValue(meanPktSize));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(nFlows);
    NodeContainer receivers;
    receivers.Create(nFlows);

    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper bott;
    bott.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    bott.SetChannelAttribute("Delay", StringValue("2ms"));
    bott.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer bdev = bott.Install(routers.Get(0), routers.Get(1));

    std::string limit = std::to_string(buffer) + "p";
    TrafficControlHelper tcBott;
    if (aqm == "red")
    {
        tcBott.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (aqm == "codel")
    {
        tcBott.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (aqm == "pie")
    {
        tcBott.SetRootQueueDisc("ns3::PieQueueDisc", "MaxSize", StringValue(limit));
    }
    else if (aqm == "droptail")
    {
        tcBott.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(limit));
    }
    else
    {
        std::cerr << "unknown --aqm " << aqm << "\n";
        return 2;
    }
    QueueDiscContainer bq = tcBott.Install(bdev.Get(0));
    TrafficControlHelper tcRev;
    tcRev.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(limit));
    tcRev.Install(bdev.Get(1));

    TrafficControlHelper tcAccess;
    tcAccess.SetRootQueueDisc("ns3::FifoQueueDisc",
                              "MaxSize",
                              StringValue(std::to_string(accessBuffer) + "p"));

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(bdev);
    addr.NewNetwork();

    std::vector<Ipv4Address> rxAddr;
    for (uint32_t i = 0; i < nFlows; i++)
    {
        PointToPointHelper acc;
        acc.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
        std::ostringstream d;
        d << delays[i] << "ms";
        acc.SetChannelAttribute("Delay", StringValue(d.str()));
        acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
        NetDeviceContainer l = acc.Install(senders.Get(i), routers.Get(0));
        NetDeviceContainer r = acc.Install(routers.Get(1), receivers.Get(i));
        tcAccess.Install(l);
        tcAccess.Install(r);
        addr.Assign(l);
        addr.NewNetwork();
        Ipv4InterfaceContainer ri = addr.Assign(r);
        addr.NewNetwork();
        rxAddr.push_back(ri.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 5000;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < nFlows; i++)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(rxAddr[i], port));
        src.SetAttribute("SendSize", UintegerValue(14600));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer ca = src.Install(senders.Get(i));
        ca.Start(Seconds(starts[i]));
    }

    // Traces on the bottleneck (A's device and its queue disc).
    Ptr<QueueDisc> qdisc = bq.Get(0);
    Ptr<PointToPointNetDevice> bdevA = DynamicCast<PointToPointNetDevice>(bdev.Get(0));
    qdisc->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&Integrator::Change, &g_qdisc));
    bdevA->GetQueue()->TraceConnectWithoutContext("PacketsInQueue",
                                                  MakeCallback(&Integrator::Change, &g_devq));
    bdevA->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&PhyTxEnd));
    qdisc->TraceConnectWithoutContext("Dequeue", MakeCallback(&QdiscDequeue));
    qdisc->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&QdiscDropAfterDequeue));
    bdevA->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&PhyTxBegin));
    if (aqm == "codel")
    {
        qdisc->TraceConnectWithoutContext("DropState", MakeCallback(&DropState));
    }

    // TCP event counters: each sender's socket exists once its application has started.
    for (uint32_t i = 0; i < nFlows; i++)
    {
        Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(senders.Get(i)->GetApplication(0));
        Simulator::Schedule(Seconds(starts[i]) + NanoSeconds(1), [app]() {
            Ptr<Socket> so = app->GetSocket();
            so->TraceConnectWithoutContext("CongState", MakeCallback(&CongState));
            so->TraceConnectWithoutContext("RTO", MakeCallback(&Rto));
            so->TraceConnectWithoutContext("Retransmission", MakeCallback(&Retx));
        });
    }
    if (!cwndTrace.empty())
    {
        g_cwnd.open(cwndTrace);
        Ptr<BulkSendApplication> app0 = DynamicCast<BulkSendApplication>(senders.Get(0)->GetApplication(0));
        Simulator::Schedule(Seconds(starts[0] + 1e-6), [app0]() {
            Ptr<Socket> so = app0->GetSocket();
            so->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&CwndTrace));
            so->TraceConnectWithoutContext("CongState", MakeCallback(&CongStateTrace));
            so->TraceConnectWithoutContext("Tx", MakeCallback(&TxTrace));
            so->TraceConnectWithoutContext("Rx", MakeCallback(&RxTrace));
        });
    }

    Snapshot atWarmup;
    Simulator::Schedule(Seconds(warmup), [&]() { atWarmup = Take(qdisc, aqm, sinks); });
    Simulator::Stop(Seconds(duration));

    auto t1 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t2 = std::chrono::steady_clock::now();

    g_qdisc.Advance(duration);
    g_devq.Advance(duration);
    g_dropping.Advance(duration);
    Snapshot atEnd = Take(qdisc, aqm, sinks);
    const double T = duration - warmup;
    const double C = 100e6;

    std::vector<double> goodput;
    double sum = 0;
    double sum2 = 0;
    for (uint32_t i = 0; i < nFlows; i++)
    {
        double g = (atEnd.rx[i] - atWarmup.rx[i]) * 8.0 / T;
        goodput.push_back(g);
        sum += g;
        sum2 += g * g;
    }
    double jain = sum2 > 0 ? sum * sum / (nFlows * sum2) : 0.0;
    uint64_t arrived = atEnd.received - atWarmup.received;
    uint64_t dropped = atEnd.dropped - atWarmup.dropped;
    uint64_t ipBytes = g_tx_wire_bytes_window - 2 * g_tx_pkts_window;  // PPP header: 2 bytes

    auto mean = [](const DelaySum& d) { return d.n ? d.sum / d.n : 0.0; };
    auto sd = [](const DelaySum& d) {
        if (d.n < 2)
        {
            return 0.0;
        }
        double m = d.sum / d.n;
        return std::sqrt(std::max(0.0, d.sq / d.n - m * m));
    };

    Simulator::Destroy();
    auto t3 = std::chrono::steady_clock::now();
    auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };

    std::printf("{\n");
    std::printf("  \"ns3_version\": \"3.44\",\n");
    std::printf("  \"flows\": %u, \"aqm\": \"%s\", \"timestamps\": %s,\n",
                nFlows, aqm.c_str(), timestamps ? "true" : "false");
    std::printf("  \"utilisation\": %.6f,\n", g_tx_wire_bytes_window * 8.0 / (C * T));
    std::printf("  \"throughput_bps\": %.1f,\n", ipBytes * 8.0 / T);
    std::printf("  \"qdisc_mean_pkts\": %.4f,\n", g_qdisc.area / T);
    std::printf("  \"devq_mean_pkts\": %.4f,\n", g_devq.area / T);
    std::printf("  \"queue_mean_pkts\": %.4f,\n", (g_qdisc.area + g_devq.area) / T);
    std::printf("  \"arrived\": %lu, \"dropped\": %lu,\n", (unsigned long)arrived, (unsigned long)dropped);
    std::printf("  \"dropped_early\": %lu, \"dropped_forced\": %lu, \"dropped_overflow\": %lu,\n",
                (unsigned long)(atEnd.early - atWarmup.early),
                (unsigned long)(atEnd.forced - atWarmup.forced),
                (unsigned long)(atEnd.overflow - atWarmup.overflow));
    std::printf("  \"loss_ratio\": %.6f,\n", arrived ? double(dropped) / arrived : 0.0);
    std::printf("  \"sojourn_mean_s\": %.9f, \"sojourn_std_s\": %.9f, \"sojourn_n\": %lu,\n",
                mean(g_sojourn), sd(g_sojourn), (unsigned long)g_sojourn.n);
    std::printf("  \"sojourn_dropped_mean_s\": %.9f, \"sojourn_dropped_n\": %lu,\n",
                mean(g_sojournDrop), (unsigned long)g_sojournDrop.n);
    std::printf("  \"to_tx_mean_s\": %.9f, \"to_tx_std_s\": %.9f, \"to_tx_n\": %lu,\n",
                mean(g_toTx), sd(g_toTx), (unsigned long)g_toTx.n);
    std::printf("  \"codel_drop_states\": %lu, \"codel_drop_states_window\": %lu, "
                "\"codel_dropping_fraction\": %.6f,\n",
                (unsigned long)g_dropStates[0], (unsigned long)g_dropStates[1], g_dropping.area / T);
    std::printf("  \"tx_pairing_errors\": %lu, \"tx_pending_at_end\": %lu,\n",
                (unsigned long)g_pairingErrors, (unsigned long)g_pending.size());
    std::printf("  \"fast_recoveries\": %lu, \"timeouts\": %lu, \"retransmits\": %lu,\n",
                (unsigned long)g_recoveries[0], (unsigned long)g_rtos[0], (unsigned long)g_retx[0]);
    std::printf("  \"fast_recoveries_window\": %lu, \"timeouts_window\": %lu, "
                "\"retransmits_window\": %lu,\n",
                (unsigned long)g_recoveries[1], (unsigned long)g_rtos[1], (unsigned long)g_retx[1]);
    std::printf("  \"jain\": %.6f,\n", jain);
    std::printf("  \"goodput_total_bps\": %.1f,\n", sum);
    std::printf("  \"bottleneck_arrivals_total\": %lu,\n", (unsigned long)atEnd.received);
    std::printf("  \"bottleneck_tx_total\": %lu,\n", (unsigned long)g_tx_pkts_total);
    std::printf("  \"wall_setup_s\": %.3f, \"wall_run_s\": %.3f, \"wall_total_s\": %.3f,\n",
                secs(t0, t1), secs(t1, t2), secs(t0, t3));
    std::printf("  \"goodput_bps\": [");
    for (uint32_t i = 0; i < nFlows; i++)
    {
        std::printf("%s%.1f", i ? ", " : "", goodput[i]);
    }
    std::printf("]\n}\n");
    return 0;
}
