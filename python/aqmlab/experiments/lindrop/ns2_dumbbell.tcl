# Seed 000's N1-N6 dumbbell in ns-2.35 (the paper used ns-2.34), for the algorithms ns-2 ships:
# DropTail, RED, ARED (Queue/RED adaptive_ 1), PI, REM and AVQ (Queue/Vq). It tells "the paper
# differs" from "ns-2 differs" from "aqmlab differs" (docs/reproductions.md).
# usage: ns ns2_dumbbell.tcl DELAY_MS CONNECTIONS WEB_RATE QUEUE BUFFER SEED DURATION [HOOK]
#   QUEUE: DropTail | RED | ARED | PI | REM | AVQ, with Table 2's parameters and ns-2's defaults
#   otherwise; prints one line of key=value results. HOOK (optional, for tracing and for
#   changing one setting at a time, scripts/ns2_lindrop_trace.tcl): a Tcl file sourced just before
#   `$ns run`, with the globals ns, ra, rb, qm and dur (ns-2 resets every link queue at `run`, so
#   a queue variable set there takes effect).
set delay_ms [lindex $argv 0]
set nconn    [lindex $argv 1]
set webrate  [lindex $argv 2]
set qtype    [lindex $argv 3]
set buffer   [lindex $argv 4]
set seed     [lindex $argv 5]
set dur      [lindex $argv 6]

set ns [new Simulator]
ns-random $seed
set rng [new RNG]
$rng seed $seed

# Table 2's parameters; everything else is ns-2's default.
set qclass $qtype
switch $qtype {
    RED  { Queue/RED set thresh_ 50 ; Queue/RED set maxthresh_ 150 }
    ARED { Queue/RED set thresh_ 50 ; Queue/RED set maxthresh_ 150 ; Queue/RED set adaptive_ 1
           set qclass RED }
    PI   { Queue/PI set qref_ 100 }
    REM  { Queue/REM set pbo_ 100 }
    AVQ  { Queue/Vq set gamma_ 0.98 ; set qclass Vq }
}
Agent/TCP set window_ 100000      ;# no receiver-window cap (scenario.toml says why)
Agent/TCP set windowInit_ 2

set ra [$ns node]
set rb [$ns node]
$ns simplex-link $ra $rb 100Mb ${delay_ms}ms $qclass
$ns simplex-link $rb $ra 100Mb ${delay_ms}ms DropTail
$ns queue-limit $ra $rb $buffer
$ns queue-limit $rb $ra $buffer
set ldel {0 12 25}
set rdel {2 37 75}
for {set i 0} {$i < 3} {incr i} {
    set n($i) [$ns node]
    set m($i) [$ns node]
    $ns duplex-link $n($i) $ra 100Mb [lindex $ldel $i]ms DropTail
    $ns duplex-link $rb $m($i) 100Mb [lindex $rdel $i]ms DropTail
    $ns queue-limit $n($i) $ra 100000
    $ns queue-limit $rb $m($i) 100000
    $ns queue-limit $m($i) $rb 100000
}

# The k-th connection takes path k mod 9: sender N(1 + k mod 3), receiver N(4 + (k / 3) mod 3).
proc tcp_flow {k size} {
    global ns n m
    set t [new Agent/TCP/Sack1]
    $t set packetSize_ $size
    set s [new Agent/TCPSink/Sack1]
    $ns attach-agent $n([expr {$k % 3}]) $t
    $ns attach-agent $m([expr {($k / 3) % 3}]) $s
    $ns connect $t $s
    set app [new Application/FTP]
    $app attach-agent $t
    return $app
}

# s. 4.2's split (as aqmlab's lindrop.flow_counts): 10% 536-byte FTP, of the 1500-byte ones 75%
# FTP, rounded half to even. Sizes are ns-2 packetSize_ (payload); ns-2 adds 40 bytes of headers.
set small [expr {round(0.1 * $nconn)}]
set large [expr {$nconn - $small}]
set x [expr {0.75 * $large}]
set ftp [expr {int(floor($x))}]
if {$x - $ftp > 0.5 || ($x - $ftp == 0.5 && $ftp % 2 == 1)} { incr ftp }
set k 0
for {set i 0} {$i < $ftp + $small} {incr i} {
    set app [tcp_flow $k [expr {$i < $ftp ? 1460 : 496}]]
    $ns at [$rng uniform 0 1] "$app start"
    incr k
}
# Web objects: Poisson arrivals at WEB_RATE, Pareto sizes of mean 50 kB and shape 1.3.
set sizes [new RandomVariable/Pareto]
$sizes set avg_ 50000
$sizes set shape_ 1.3
$sizes use-rng $rng
set t 0.0
set objects 0
while {1} {
    set t [expr {$t + [$rng exponential [expr {1.0 / $webrate}]]}]
    if {$t >= $dur} break
    set app [tcp_flow $k 1460]
    $ns at $t "$app send [expr {int([$sizes value])}]"
    incr k
    incr objects
}
# Reverse UDP CBR: 10% of the reverse capacity in 1000-byte packets, N4 -> N1.
set udp [new Agent/UDP]
set null [new Agent/Null]
$ns attach-agent $m(0) $udp
$ns attach-agent $n(0) $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 1000
$cbr set rate_ 10Mb
$cbr attach-agent $udp
$ns at 0.0 "$cbr start"

set qm [$ns monitor-queue $ra $rb [open /dev/null w] 0.1]
set pint [$qm get-pkts-integrator]
proc finish {} {
    global qm pint dur objects
    set arr [$qm set parrivals_]
    set dep [$qm set pdepartures_]
    set drp [$qm set pdrops_]
    set bdep [$qm set bdepartures_]
    puts [format "arrivals=%d departures=%d drops=%d web_objects=%d throughput_mbps=%.4f queue_mean_pkts=%.4f loss_pct=%.4f mean_pkt_bytes=%.1f" \
        $arr $dep $drp $objects [expr {$bdep * 8.0 / $dur / 1e6}] [expr {[$pint set sum_] / $dur}] \
        [expr {$arr > 0 ? 100.0 * $drp / $arr : 0}] [expr {$dep > 0 ? double($bdep) / $dep : 0}]]
    exit 0
}
$ns at $dur "finish"
if {[llength $argv] > 7} { source [lindex $argv 7] }
$ns run
