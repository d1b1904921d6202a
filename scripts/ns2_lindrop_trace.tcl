# Hook for experiments/lindrop/ns2_dumbbell.tcl (its optional 8th argument): traces the
# bottleneck queue RA -> RB and changes one queue variable at a time, to compare ns-2 with
# aqmlab on one case (docs/reproductions.md, seed 000, item 5).
#
#   NS2_SET="wait_ false linterm_ 20" NS2_TRACE=/tmp/red.tsv \
#     ns experiments/lindrop/ns2_dumbbell.tcl 2 100 1.25 RED 300 1 100 scripts/ns2_lindrop_trace.tcl
#
# NS2_SET: pairs "variable value" set on the bottleneck queue object before `$ns run` (ns-2 resets
# every link queue at `run`, so derived values such as RED's byte thresholds follow them).
# NS2_TRACE: a file of tab-separated samples every NS2_SAMPLE seconds (default 0.01): time,
# queue (packets), queue (bytes), departures, drops (cumulative, from the queue monitor), and the
# queue's own state where it has one (RED: ave_ prob1_ cur_max_p_; REM: prob_; Vq: curq_).
set bq [[$ns link $ra $rb] queue]
if {[info exists env(NS2_SET)]} {
    foreach {var val} $env(NS2_SET) { $bq set $var $val }
}
if {[info exists env(NS2_TRACE)]} {
    set tr_fd [open $env(NS2_TRACE) w]
    set tr_dt [expr {[info exists env(NS2_SAMPLE)] ? $env(NS2_SAMPLE) : 0.01}]
    set tr_vars {}
    foreach v {ave_ prob1_ cur_max_p_ prob_ curq_} {
        if {![catch {$bq set $v}]} { lappend tr_vars $v }
    }
    puts $tr_fd [join [list t qpkts qbytes departures drops {*}$tr_vars] "\t"]
    proc tr_sample {} {
        global ns qm bq tr_fd tr_dt tr_vars dur
        set now [$ns now]
        set row [list $now [$qm set pkts_] [$qm set size_] [$qm set pdepartures_] [$qm set pdrops_]]
        foreach v $tr_vars { lappend row [$bq set $v] }
        puts $tr_fd [join $row "\t"]
        if {$now + $tr_dt < $dur} { $ns at [expr {$now + $tr_dt}] "tr_sample" } else { flush $tr_fd }
    }
    $ns at 0.0 "tr_sample"
}
