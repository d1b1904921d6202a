# Seed 004's dumbbell in ns-2.35 (the paper's simulator), to tell "the paper differs" from
# "ns-2 differs" from "aqmlab differs" (docs/reproductions.md).
# usage: ns experiments/modred/ns2_dumbbell.tcl FLOWS BUFFER QUEUE WINDOW SEED [TCP] [SPREAD] [DURATION]
#   QUEUE: DropTail | RED (ns-2's classic 5 / 15 packets, max_p 0.1, w_q 0.002, gentle: as
#          experiment.toml) | REDdefault (ns-2.35's own Queue/RED defaults: byte mode, mean_pktsize_
#          500, thresholds from targetdelay_ 5 ms, automatic q_weight_) ; WINDOW: Agent/TCP window_
#   TCP: Newreno (default) | Reno | Sack1 ; SPREAD: flows start uniformly in [0, SPREAD] s (0: all at
#   0 s) ; prints one line of key=value results.
set nflows [lindex $argv 0]
set buffer [lindex $argv 1]
set qtype  [lindex $argv 2]
set wnd    [lindex $argv 3]
set seed   [lindex $argv 4]
set tcpv   [expr {[llength $argv] > 5 ? [lindex $argv 5] : "Newreno"}]
set spread [expr {[llength $argv] > 6 ? [lindex $argv 6] : 0.0}]
set dur    [expr {[llength $argv] > 7 ? [lindex $argv 7] : 10.0}]

set ns [new Simulator]
ns-random $seed
set rng [new RNG]
$rng seed $seed
if {$qtype == "REDdefault"} {
    set qtype RED
} elseif {$qtype == "RED"} {
    # ns-2's classic RED parameters, as aqmlab's experiment file sets them (explicit, so the
    # automatic thresholds of ns-2.35 are not used): packets, not bytes.
    Queue/RED set thresh_ 5
    Queue/RED set maxthresh_ 15
    Queue/RED set linterm_ 10
    Queue/RED set q_weight_ 0.002
    Queue/RED set bytes_ false
    Queue/RED set queue_in_bytes_ false
    Queue/RED set gentle_ true
    Queue/RED set mean_pktsize_ 1000
}
Agent/TCP set packetSize_ 1000
Agent/TCP set window_ $wnd

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 10Mb 150ms $qtype
$ns queue-limit $r1 $r2 $buffer
$ns queue-limit $r2 $r1 $buffer
for {set i 0} {$i < $nflows} {incr i} {
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r1 10Mb 1ms DropTail
    $ns duplex-link $r2 $d($i) 10Mb 1ms DropTail
    $ns queue-limit $s($i) $r1 10000
    set tcp($i) [new Agent/TCP/$tcpv]
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [expr {$spread > 0 ? [$rng uniform 0 $spread] : 0.0}] "$ftp($i) start"
}
set qm [$ns monitor-queue $r1 $r2 [open /dev/null w] 0.1]
proc finish {} {
    global qm dur nflows
    set arr [$qm set parrivals_]
    set dep [$qm set pdepartures_]
    set drp [$qm set pdrops_]
    set bdep [$qm set bdepartures_]
    puts [format "flows=%d arrivals=%d departures=%d drops=%d loss_pct=%.4f utilisation_pct=%.3f" \
        $nflows $arr $dep $drp [expr {$arr > 0 ? 100.0 * $drp / $arr : 0}] \
        [expr {100.0 * $bdep * 8 / ($dur * 10e6)}]]
    exit 0
}
$ns at $dur "finish"
$ns run
