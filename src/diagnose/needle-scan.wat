;; The scan's inner loop in WebAssembly (needle-scan.ts loads it; `npm run wasm` turns this text into
;; needle-scan-wasm.ts). It does what NeedleSearch.search does in JavaScript, with the same tables,
;; and then what LineSplitter.block did per line: which lines hold a needle, where they start and end,
;; how many newlines come before each. Measured on the failure-dense benchmark log (bench/README.md,
;; round 8): half the time of the JavaScript search, and no warm-up (JavaScript runs interpreted for
;; the first megabytes of each thread).
;;
;; Memory layout (bytes; needle-scan.ts writes the tables and reads the results at the same places):
;;   0        seen: bit h set when some fingerprint hashes to h (65,536 bits)
;;   8192     head: first fingerprint with hash h, -1 for none (65,536 x i32)
;;   270336   fingerprints, 24 bytes each: word, after, afterMask, needle, offset, next with the same hash
;;   282624   needles, 12 bytes each: where its bytes start (from 286720), its length, its bits
;;   286720   needle bytes (4 KiB)
;;   290816   matches found: where each starts (16,384 x i32)
;;   356352   matches found: their bits (16,384 x i32)
;;   421888   lines holding matches, 16 bytes each: newlines before it (from `start`), start, end, bits
;;   1048576  the text: two read buffers of 512 KiB
;;   2097152  a line carried over from one read to the next, copied (64 KiB)
(module
  (memory (export "memory") 33 33)
  ;; Newlines in [start, end) of the last scan.
  (global $newlines (export "newlines") (mut i32) (i32.const 0))

  ;; Newlines in [from, to): 16 bytes at a time.
  (func $count (param $from i32) (param $to i32) (result i32)
    (local $n i32)
    (block $done
      (loop $vec
        (br_if $done (i32.gt_s (i32.add (local.get $from) (i32.const 16)) (local.get $to)))
        (local.set $n (i32.add (local.get $n)
          (i32.popcnt (i8x16.bitmask (i8x16.eq (v128.load (local.get $from)) (i8x16.splat (i32.const 10)))))))
        (local.set $from (i32.add (local.get $from) (i32.const 16)))
        (br $vec)))
    (block $done2
      (loop $byte
        (br_if $done2 (i32.ge_s (local.get $from) (local.get $to)))
        (local.set $n (i32.add (local.get $n) (i32.eq (i32.load8_u (local.get $from)) (i32.const 10))))
        (local.set $from (i32.add (local.get $from) (i32.const 1)))
        (br $byte)))
    (local.get $n))

  ;; The first newline in [from, to), or `to` if none.
  (func $next (param $from i32) (param $to i32) (result i32)
    (local $m i32)
    (block $done
      (loop $vec
        (br_if $done (i32.gt_s (i32.add (local.get $from) (i32.const 16)) (local.get $to)))
        (local.set $m (i8x16.bitmask (i8x16.eq (v128.load (local.get $from)) (i8x16.splat (i32.const 10)))))
        (if (local.get $m) (then (return (i32.add (local.get $from) (i32.ctz (local.get $m))))))
        (local.set $from (i32.add (local.get $from) (i32.const 16)))
        (br $vec)))
    (block $done2
      (loop $byte
        (br_if $done2 (i32.ge_s (local.get $from) (local.get $to)))
        (if (i32.eq (i32.load8_u (local.get $from)) (i32.const 10)) (then (return (local.get $from))))
        (local.set $from (i32.add (local.get $from) (i32.const 1)))
        (br $byte)))
    (local.get $to))

  ;; The last newline in [lo, to), or lo - 1 if none.
  (func $prev (param $lo i32) (param $to i32) (result i32)
    (local $m i32)
    (block $done
      (loop $vec
        (br_if $done (i32.lt_s (i32.sub (local.get $to) (i32.const 16)) (local.get $lo)))
        (local.set $to (i32.sub (local.get $to) (i32.const 16)))
        (local.set $m (i8x16.bitmask (i8x16.eq (v128.load (local.get $to)) (i8x16.splat (i32.const 10)))))
        (if (local.get $m) (then (return (i32.sub (i32.add (local.get $to) (i32.const 31)) (i32.clz (local.get $m))))))
        (br $vec)))
    (block $done2
      (loop $byte
        (br_if $done2 (i32.le_s (local.get $to) (local.get $lo)))
        (local.set $to (i32.sub (local.get $to) (i32.const 1)))
        (if (i32.eq (i32.load8_u (local.get $to)) (i32.const 10)) (then (return (local.get $to))))
        (br $byte)))
    (i32.sub (local.get $lo) (i32.const 1)))

  ;; The needles in [start, end) (NeedleSearch.search: aligned words hashed, candidates compared in
  ;; full): their number, or -1 when more than 16,384 (the caller then searches in JavaScript).
  (func $search (param $start i32) (param $end i32) (result i32)
    (local $w i32) (local $endWord i32) (local $x i32) (local $h i32) (local $y i32) (local $f i32)
    (local $fp i32) (local $np i32) (local $at i32) (local $len i32) (local $from i32) (local $j i32)
    (local $n i32)
    (local.set $w (i32.shr_u (i32.add (local.get $start) (i32.const 3)) (i32.const 2)))
    (local.set $endWord (i32.shr_u (local.get $end) (i32.const 2)))
    (block $done
      (loop $words
        (br_if $done (i32.ge_u (local.get $w) (local.get $endWord)))
        (local.set $x (i32.load (i32.shl (local.get $w) (i32.const 2))))
        (local.set $h (i32.shr_u (i32.mul (local.get $x) (i32.const 0x9e3779b1)) (i32.const 16)))
        (if (i32.and (i32.load (i32.shl (i32.shr_u (local.get $h) (i32.const 5)) (i32.const 2)))
                     (i32.shl (i32.const 1) (i32.and (local.get $h) (i32.const 31))))
          (then
            ;; The next word, when it is wholly inside.
            (local.set $y (if (result i32) (i32.lt_u (i32.add (local.get $w) (i32.const 1)) (local.get $endWord))
              (then (i32.load offset=4 (i32.shl (local.get $w) (i32.const 2))))
              (else (i32.const -1))))
            (local.set $f (i32.load offset=8192 (i32.shl (local.get $h) (i32.const 2))))
            (block $chainEnd
              (loop $chain
                (br_if $chainEnd (i32.eq (local.get $f) (i32.const -1)))
                (local.set $fp (i32.add (i32.const 270336) (i32.mul (local.get $f) (i32.const 24))))
                (block $next
                  (br_if $next (i32.ne (i32.load (local.get $fp)) (local.get $x)))
                  (br_if $next (i32.and (i32.ne (local.get $y) (i32.const -1))
                    (i32.ne (i32.and (local.get $y) (i32.load offset=8 (local.get $fp))) (i32.load offset=4 (local.get $fp)))))
                  (local.set $np (i32.add (i32.const 282624) (i32.mul (i32.load offset=12 (local.get $fp)) (i32.const 12))))
                  (local.set $at (i32.sub (i32.shl (local.get $w) (i32.const 2)) (i32.load offset=16 (local.get $fp))))
                  (local.set $len (i32.load offset=4 (local.get $np)))
                  (br_if $next (i32.lt_s (local.get $at) (local.get $start)))
                  (br_if $next (i32.gt_s (i32.add (local.get $at) (local.get $len)) (local.get $end)))
                  (local.set $from (i32.add (i32.const 286720) (i32.load (local.get $np))))
                  (local.set $j (i32.const 0))
                  (block $cmpEnd
                    (loop $cmp
                      (br_if $cmpEnd (i32.ge_s (local.get $j) (local.get $len)))
                      (br_if $cmpEnd (i32.ne (i32.load8_u (i32.add (local.get $at) (local.get $j)))
                                             (i32.load8_u (i32.add (local.get $from) (local.get $j)))))
                      (local.set $j (i32.add (local.get $j) (i32.const 1)))
                      (br $cmp)))
                  (br_if $next (i32.ne (local.get $j) (local.get $len)))
                  (if (i32.eq (local.get $n) (i32.const 16384)) (then (return (i32.const -1))))
                  (i32.store offset=290816 (i32.shl (local.get $n) (i32.const 2)) (local.get $at))
                  (i32.store offset=356352 (i32.shl (local.get $n) (i32.const 2)) (i32.load offset=8 (local.get $np)))
                  (local.set $n (i32.add (local.get $n) (i32.const 1))))
                (local.set $f (i32.load offset=20 (local.get $fp)))
                (br $chain)))))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $words)))
    (local.get $n))

  ;; [start, end) holds whole lines, the last ending with a newline. Finds the needles, then the lines
  ;; holding them: writes a record per line (newlines before it, its start, its end = its newline, the
  ;; OR of its needles' bits), sets `newlines`, and returns the number of records (-1: too many needles).
  ;; A needle found later may start before one found earlier, but then in the same line (search's order).
  (func (export "scan") (param $start i32) (param $end i32) (result i32)
    (local $n i32) (local $i i32) (local $r i32) (local $pos i32) (local $nl i32) (local $a i32)
    (local $ls i32) (local $le i32) (local $bits i32) (local $rec i32)
    (local.set $n (call $search (local.get $start) (local.get $end)))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (i32.const -1))))
    (local.set $pos (local.get $start))
    (block $done
      (loop $lines
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $a (i32.load offset=290816 (i32.shl (local.get $i) (i32.const 2))))
        (local.set $ls (i32.add (call $prev (local.get $pos) (local.get $a)) (i32.const 1)))
        (local.set $le (call $next (local.get $a) (local.get $end)))
        (local.set $nl (i32.add (local.get $nl) (call $count (local.get $pos) (local.get $ls))))
        (local.set $bits (i32.const 0))
        (block $group
          (loop $same
            (br_if $group (i32.ge_s (local.get $i) (local.get $n)))
            (br_if $group (i32.ge_s (i32.load offset=290816 (i32.shl (local.get $i) (i32.const 2))) (local.get $le)))
            (local.set $bits (i32.or (local.get $bits) (i32.load offset=356352 (i32.shl (local.get $i) (i32.const 2)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $same)))
        (local.set $rec (i32.add (i32.const 421888) (i32.shl (local.get $r) (i32.const 4))))
        (i32.store (local.get $rec) (local.get $nl))
        (i32.store offset=4 (local.get $rec) (local.get $ls))
        (i32.store offset=8 (local.get $rec) (local.get $le))
        (i32.store offset=12 (local.get $rec) (local.get $bits))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        ;; The line's own newline (none when it ends the block without one).
        (local.set $nl (i32.add (local.get $nl) (i32.lt_s (local.get $le) (local.get $end))))
        (local.set $pos (i32.add (local.get $le) (i32.const 1)))
        (br $lines)))
    (if (i32.lt_s (local.get $pos) (local.get $end))
      (then (local.set $nl (i32.add (local.get $nl) (call $count (local.get $pos) (local.get $end))))))
    (global.set $newlines (local.get $nl))
    (local.get $r))
)
