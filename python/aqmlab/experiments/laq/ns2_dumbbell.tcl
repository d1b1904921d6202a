# Seed 001's Experiment 1 in ns-2.35 (the paper's simulator), to tell "the paper differs" from
# "ns-2 differs" from "aqmlab differs" (docs/reproductions.md, seed 001): 250 TCP/Reno flows with
# 80 ms round trips (100 Mb/s / 10 ms side links, a 20 Mb/s / 20 ms bottleneck), a 600-packet
# buffer, 1000-byte packets on the wire (packetSize_ 960 + ns-2's 40 header bytes, as
# scenario.toml), all flows starting at 0 s.
# usage: ns ns2_dumbbell.tcl QUEUE SEED [DURATION [SPREAD [JOIN]]]
#   QUEUE: ARED (Queue/RED adaptive_ 1, min_th 100, max_th 300, beta 0.9, interval 0.5 s, every
#          other setting ns-2.35's default, byte mode included) | REM (pbo_ 200, defaults
#          otherwise) | PI (qref_ 200, a_ / b_ / w_ the paper's, which are ns-2's defaults)
#   SPREAD: the 250 flows start at uniform random times in [0, SPREAD] s (0: all at 0 s;
#           Experiment 3: 10) ; JOIN: 1 adds 100 flows from 50 s to 70 s (Experiment 2)
# prints one line of key=value results (Table 1's metrics that ns-2's queue monitor gives); with
# SPREAD or JOIN given, first the queue every 10 ms as lines "q TIME PACKETS".
set qtype [lindex $argv 0]
set seed  [lindex $argv 1]
set dur   [expr {[llength $argv] > 2 ? [lindex $argv 2] : 100.0}]
set spread [expr {[llength $argv] > 3 ? [lindex $argv 3] : 0.0}]
set join  [expr {[llength $argv] > 4 ? [lindex $argv 4] : 0}]
set series [expr {[llength $argv] > 3}]

set ns [new Simulator]
ns-random $seed
switch $qtype {
    ARED {
        Queue/RED set adaptive_ 1
        Queue/RED set thresh_ 100
        Queue/RED set maxthresh_ 300
        Queue/RED set beta_ 0.9
        Queue/RED set interval_ 0.5
        set q RED
    }
    REM {
        Queue/REM set pbo_ 200
        set q REM
    }
    PI {
        Queue/PI set qref_ 200
        set q PI
    }
    default { puts stderr "QUEUE: ARED, REM or PI (got $qtype)"; exit 2 }
}
Agent/TCP set packetSize_ 960
Agent/TCP set window_ 10000
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 20Mb 20ms $q
$ns queue-limit $r1 $r2 600
set rng [new RNG]
$rng seed $seed
set nflows [expr {$join ? 350 : 250}]
for {set i 0} {$i < $nflows} {incr i} {
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r1 100Mb 10ms DropTail
    $ns duplex-link $r2 $d($i) 100Mb 10ms DropTail
    set tcp($i) [new Agent/TCP/Reno]
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    if {$i >= 250} {
        $ns at 50.0 "$ftp($i) start"
        $ns at 70.0 "$ftp($i) stop"
    } else {
        $ns at [expr {$spread > 0 ? [$rng uniform 0 $spread] : 0.0}] "$ftp($i) start"
    }
}
set qm [$ns monitor-queue $r1 $r2 [open /dev/null w] 0.1]
proc sample {} {
    global ns qm
    puts "q [$ns now] [$qm set pkts_]"
    $ns at [expr {[$ns now] + 0.01}] "sample"
}
if {$series} { $ns at 0.0 "sample" }
proc finish {} {
    global qm dur
    set arr [$qm set parrivals_]
    set dep [$qm set pdepartures_]
    set drp [$qm set pdrops_]
    set bdep [$qm set bdepartures_]
    set meanq [expr {[[$qm get-pkts-integrator] set sum_] / $dur}]
    # payload share of a 1000-byte packet: 960 bytes, as the paper counts (laq.py, extract)
    puts [format "mean_queue=%.4f loss=%.6f utilisation=%.6f throughput=%.6f delay=%.6f" \
        $meanq [expr {100.0 * $drp / $arr}] [expr {100.0 * 0.96 * $bdep * 8 / ($dur * 20e6)}] \
        [expr {0.96 * $bdep * 8 / $dur / 1e6}] [expr {$meanq / ($dep / $dur)}]]
    exit 0
}
$ns at $dur "finish"
$ns run
