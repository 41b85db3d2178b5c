;; The scan kernels of quire's vector codes (see vector_codes.ts) and float16 rows (see half_rows.ts), in WebAssembly
;; text with 128-bit SIMD.
;; `deno task build:kernels` compiles this file into kernels_wasm.ts; tests/unit/vector_codes_test.ts checks that the two
;; agree. Every row is `stride` bytes, a multiple of 16, zero-padded past the vector's own dimensions. The memory is
;; shared, so that a helper thread runs the same kernels over it (see scan_helper.ts).
(module
  (import "quire" "memory" (memory 1 65536 shared))

  ;; out[i] = the dot product of row i of `codes` (int8) with `query` (int16), for `rows` rows in order.
  (func (export "dots") (param $codes i32) (param $rows i32) (param $stride i32) (param $query i32) (param $out i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $rows) (i32.const 2))))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (i32.store (local.get $out) (call $dot (local.get $codes) (local.get $stride) (local.get $query)))
        (local.set $codes (i32.add (local.get $codes) (local.get $stride)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $row))))

  ;; out[i] = the dot product of row ids[i] of `codes` (int8) with `query` (int16), for `count` ids. Rows far apart wait
  ;; on memory, so four are read together, and each tile of 64 rows is first brought into the cache by $touchRows,
  ;; whose loads overlap more: deep scans run faster with the tiles, on small indexes and large ones alike.
  (func (export "dotsAt")
    (param $codes i32) (param $ids i32) (param $count i32) (param $stride i32) (param $query i32) (param $out i32)
    (local $end i32) (local $fours i32) (local $tileEnd i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32) (local $j i32) (local $q i32)
    (local $a0 v128) (local $a1 v128) (local $b0 v128) (local $b1 v128)
    (local $c0 v128) (local $c1 v128) (local $d0 v128) (local $d1 v128)
    (local $low v128) (local $high v128)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (local.set $fours (i32.add (local.get $out) (i32.shl (i32.and (local.get $count) (i32.const -4)) (i32.const 2))))
    (block $done
      (loop $four
        (br_if $done (i32.ge_u (local.get $out) (local.get $fours)))
        (if (i32.ge_u (local.get $out) (local.get $tileEnd))
          (then
            ;; A row's result takes 4 bytes of `out`.
            (local.set $tileEnd (i32.add (local.get $out) (i32.const 256)))
            (if (i32.gt_u (local.get $tileEnd) (local.get $fours)) (then (local.set $tileEnd (local.get $fours))))
            (call $touchRows
              (local.get $codes)
              (local.get $ids)
              (i32.shr_u (i32.sub (local.get $tileEnd) (local.get $out)) (i32.const 2))
              (local.get $stride)
              (local.get $out))))
        (local.set $a (i32.add (local.get $codes) (i32.mul (i32.load offset=0 (local.get $ids)) (local.get $stride))))
        (local.set $b (i32.add (local.get $codes) (i32.mul (i32.load offset=4 (local.get $ids)) (local.get $stride))))
        (local.set $c (i32.add (local.get $codes) (i32.mul (i32.load offset=8 (local.get $ids)) (local.get $stride))))
        (local.set $d (i32.add (local.get $codes) (i32.mul (i32.load offset=12 (local.get $ids)) (local.get $stride))))
        (local.set $a0 (v128.const i32x4 0 0 0 0)) (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $b0 (v128.const i32x4 0 0 0 0)) (local.set $b1 (v128.const i32x4 0 0 0 0))
        (local.set $c0 (v128.const i32x4 0 0 0 0)) (local.set $c1 (v128.const i32x4 0 0 0 0))
        (local.set $d0 (v128.const i32x4 0 0 0 0)) (local.set $d1 (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (loop $chunk
          (local.set $q (i32.add (local.get $query) (i32.shl (local.get $j) (i32.const 1))))
          (local.set $low (v128.load (local.get $q)))
          (local.set $high (v128.load offset=16 (local.get $q)))
          (local.set $a0 (call $dotLow (local.get $a0) (i32.add (local.get $a) (local.get $j)) (local.get $low)))
          (local.set $a1 (call $dotHigh (local.get $a1) (i32.add (local.get $a) (local.get $j)) (local.get $high)))
          (local.set $b0 (call $dotLow (local.get $b0) (i32.add (local.get $b) (local.get $j)) (local.get $low)))
          (local.set $b1 (call $dotHigh (local.get $b1) (i32.add (local.get $b) (local.get $j)) (local.get $high)))
          (local.set $c0 (call $dotLow (local.get $c0) (i32.add (local.get $c) (local.get $j)) (local.get $low)))
          (local.set $c1 (call $dotHigh (local.get $c1) (i32.add (local.get $c) (local.get $j)) (local.get $high)))
          (local.set $d0 (call $dotLow (local.get $d0) (i32.add (local.get $d) (local.get $j)) (local.get $low)))
          (local.set $d1 (call $dotHigh (local.get $d1) (i32.add (local.get $d) (local.get $j)) (local.get $high)))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (br_if $chunk (i32.lt_u (local.get $j) (local.get $stride))))
        (i32.store offset=0 (local.get $out) (call $lanes (i32x4.add (local.get $a0) (local.get $a1))))
        (i32.store offset=4 (local.get $out) (call $lanes (i32x4.add (local.get $b0) (local.get $b1))))
        (i32.store offset=8 (local.get $out) (call $lanes (i32x4.add (local.get $c0) (local.get $c1))))
        (i32.store offset=12 (local.get $out) (call $lanes (i32x4.add (local.get $d0) (local.get $d1))))
        (local.set $ids (i32.add (local.get $ids) (i32.const 16)))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (br $four)))
    (block $rest
      (loop $each
        (br_if $rest (i32.ge_u (local.get $out) (local.get $end)))
        (i32.store
          (local.get $out)
          (call $dot
            (i32.add (local.get $codes) (i32.mul (i32.load (local.get $ids)) (local.get $stride)))
            (local.get $stride)
            (local.get $query)))
        (local.set $ids (i32.add (local.get $ids) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $each))))

  ;; out[i] (float64) = row ids[i] of the float16 `rows` · the float64 `query`, for `count` int32 ids. Each product is
  ;; exact in float64; the sums run in two lanes. Rows far apart wait on memory, so two are read together, and each
  ;; tile of 32 rows is first brought into the cache by $touchRows, which pays on the largest indexes and makes no
  ;; measurable difference on smaller ones.
  (func (export "halfDotsAt")
    (param $rows i32) (param $ids i32) (param $count i32) (param $stride i32) (param $query i32) (param $out i32)
    (local $end i32) (local $pairs i32) (local $a i32) (local $b i32) (local $j i32) (local $q i32)
    (local $v v128) (local $w v128) (local $sumA v128) (local $sumB v128) (local $tileEnd i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 3))))
    (local.set $pairs (i32.add (local.get $out) (i32.shl (i32.and (local.get $count) (i32.const -2)) (i32.const 3))))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (if (i32.ge_u (local.get $out) (local.get $tileEnd))
          (then
            ;; A row's result takes 8 bytes of `out`.
            (local.set $tileEnd (i32.add (local.get $out) (i32.const 256)))
            (if (i32.gt_u (local.get $tileEnd) (local.get $end)) (then (local.set $tileEnd (local.get $end))))
            (call $touchRows
              (local.get $rows)
              (local.get $ids)
              (i32.shr_u (i32.sub (local.get $tileEnd) (local.get $out)) (i32.const 3))
              (local.get $stride)
              (local.get $out))))
        (local.set $a (i32.add (local.get $rows) (i32.mul (i32.load (local.get $ids)) (local.get $stride))))
        ;; The last of an odd count pairs with itself, and stores its result once.
        (local.set $b
          (select
            (i32.add (local.get $rows) (i32.mul (i32.load offset=4 (local.get $ids)) (local.get $stride)))
            (local.get $a)
            (i32.lt_u (local.get $out) (local.get $pairs))))
        (local.set $sumA (v128.const f64x2 0 0))
        (local.set $sumB (v128.const f64x2 0 0))
        (local.set $j (i32.const 0))
        (loop $chunk
          ;; Eight halves a step, against eight float64 query components.
          (local.set $q (i32.add (local.get $query) (i32.shl (local.get $j) (i32.const 2))))
          (local.set $v (v128.load (i32.add (local.get $a) (local.get $j))))
          (local.set $w (v128.load (i32.add (local.get $b) (local.get $j))))
          (local.set $sumA (call $halfDot (local.get $sumA) (local.get $v) (local.get $q)))
          (local.set $sumB (call $halfDot (local.get $sumB) (local.get $w) (local.get $q)))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (br_if $chunk (i32.lt_u (local.get $j) (local.get $stride))))
        (f64.store (local.get $out) (call $pairSum (local.get $sumA)))
        (if (i32.lt_u (local.get $out) (local.get $pairs))
          (then (f64.store offset=8 (local.get $out) (call $pairSum (local.get $sumB)))))
        (local.set $ids (i32.add (local.get $ids) (i32.const 8)))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (br $each))))

  ;; `sum` plus the products of the eight halves `h` with the eight float64 at `q`, in two float64 lanes.
  (func $halfDot (param $sum v128) (param $h v128) (param $q i32) (result v128)
    (local $low v128) (local $high v128)
    (local.set $low (call $widenHalves (i32x4.extend_low_i16x8_u (local.get $h))))
    (local.set $high (call $widenHalves (i32x4.extend_high_i16x8_u (local.get $h))))
    (f64x2.add
      (f64x2.add
        (local.get $sum)
        (f64x2.add
          (f64x2.mul (f64x2.promote_low_f32x4 (local.get $low)) (v128.load offset=0 (local.get $q)))
          (f64x2.mul (call $highPair (local.get $low)) (v128.load offset=16 (local.get $q)))))
      (f64x2.add
        (f64x2.mul (f64x2.promote_low_f32x4 (local.get $high)) (v128.load offset=32 (local.get $q)))
        (f64x2.mul (call $highPair (local.get $high)) (v128.load offset=48 (local.get $q))))))

  ;; Four float16 bit patterns (one in the low 16 bits of each lane) as float32, exactly: the exponent and mantissa
  ;; moved into float32's places are the value times 2^-112 (subnormal halves become subnormal floats), so one multiply
  ;; by 2^112 restores it; then the sign. Halves here are finite.
  (func $widenHalves (param $h v128) (result v128)
    (v128.or
      (f32x4.mul
        (i32x4.shl (v128.and (local.get $h) (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)) (i32.const 13))
        (v128.const f32x4 0x1p112 0x1p112 0x1p112 0x1p112))
      (i32x4.shl (v128.and (local.get $h) (v128.const i32x4 0x8000 0x8000 0x8000 0x8000)) (i32.const 16))))

  ;; Four float32 lanes as float16 bit patterns (in the low 16 bits of each lane), rounded to nearest, ties to even.
  ;; The values are finite and below 65,520 in size. A value below float16's least normal is rounded by the float
  ;; addition of 0.5, which leaves its half's bits at the bottom of the mantissa; a normal one by adding the exponents'
  ;; difference, 0xfff and the mantissa's last kept bit, then shifting.
  (func $narrowFloats (param $f v128) (result v128)
    (local $sign v128) (local $x v128) (local $small v128) (local $normal v128)
    (local.set $sign (v128.and (local.get $f) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)))
    (local.set $x (v128.xor (local.get $f) (local.get $sign)))
    (local.set $small
      (i32x4.sub
        (f32x4.add (local.get $x) (v128.const f32x4 0.5 0.5 0.5 0.5))
        (v128.const i32x4 0x3f000000 0x3f000000 0x3f000000 0x3f000000)))
    (local.set $normal
      (i32x4.shr_u
        (i32x4.add
          (i32x4.add (local.get $x) (v128.const i32x4 0xc8000fff 0xc8000fff 0xc8000fff 0xc8000fff))
          (v128.and (i32x4.shr_u (local.get $x) (i32.const 13)) (v128.const i32x4 1 1 1 1)))
        (i32.const 13)))
    (v128.or
      (v128.bitselect
        (local.get $small)
        (local.get $normal)
        (i32x4.lt_u (local.get $x) (v128.const i32x4 0x38800000 0x38800000 0x38800000 0x38800000)))
      (i32x4.shr_u (local.get $sign) (i32.const 16))))

  ;; Writes the float32 row at `floats` (`stride` / 2 floats, zeros past the vector's dimensions) times `scale` as
  ;; float16 at `row` (`stride` bytes); returns the sum of the squares of what it wrote, in float64.
  (func (export "toHalves") (param $floats i32) (param $stride i32) (param $scale f32) (param $row i32) (result f64)
    (local $j i32) (local $at i32) (local $factor v128) (local $h v128) (local $sum v128)
    (local.set $factor (f32x4.splat (local.get $scale)))
    (loop $step
      (local.set $at (i32.add (local.get $floats) (i32.shl (local.get $j) (i32.const 1))))
      (local.set $h
        (i16x8.narrow_i32x4_u
          (call $narrowFloats (f32x4.mul (v128.load offset=0 (local.get $at)) (local.get $factor)))
          (call $narrowFloats (f32x4.mul (v128.load offset=16 (local.get $at)) (local.get $factor)))))
      (v128.store (i32.add (local.get $row) (local.get $j)) (local.get $h))
      (local.set $sum (call $halfSquares (local.get $sum) (local.get $h)))
      (local.set $j (i32.add (local.get $j) (i32.const 16)))
      (br_if $step (i32.lt_u (local.get $j) (local.get $stride))))
    (call $pairSum (local.get $sum)))

  ;; `sum` plus the squares of the eight halves `h`, in two float64 lanes.
  (func $halfSquares (param $sum v128) (param $h v128) (result v128)
    (local $low v128) (local $high v128) (local $a v128) (local $b v128) (local $c v128) (local $d v128)
    (local.set $low (call $widenHalves (i32x4.extend_low_i16x8_u (local.get $h))))
    (local.set $high (call $widenHalves (i32x4.extend_high_i16x8_u (local.get $h))))
    (local.set $a (f64x2.promote_low_f32x4 (local.get $low)))
    (local.set $b (call $highPair (local.get $low)))
    (local.set $c (f64x2.promote_low_f32x4 (local.get $high)))
    (local.set $d (call $highPair (local.get $high)))
    (f64x2.add
      (f64x2.add (local.get $sum) (f64x2.add (f64x2.mul (local.get $a) (local.get $a)) (f64x2.mul (local.get $b) (local.get $b))))
      (f64x2.add (f64x2.mul (local.get $c) (local.get $c)) (f64x2.mul (local.get $d) (local.get $d)))))

  ;; The sum of the squares of the float16 row at `row` (`stride` bytes), in float64, added up as toHalves adds them.
  (func $rowSquares (export "halfSquares") (param $row i32) (param $stride i32) (result f64)
    (local $j i32) (local $sum v128)
    (loop $step
      (local.set $sum (call $halfSquares (local.get $sum) (v128.load (i32.add (local.get $row) (local.get $j)))))
      (local.set $j (i32.add (local.get $j) (i32.const 16)))
      (br_if $step (i32.lt_u (local.get $j) (local.get $stride))))
    (call $pairSum (local.get $sum)))

  ;; out[i] (float64) = the sum of the squares of float16 row i at `rows` (`stride` bytes each) as "halfSquares" adds
  ;; them up, for `count` rows: a load's rows, many a call.
  (func (export "halfSquaresOf") (param $rows i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $i i32)
    (block $done
      (br_if $done (i32.eqz (local.get $count)))
      (loop $row
        (f64.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 3)))
          (call $rowSquares (i32.add (local.get $rows) (i32.mul (local.get $i) (local.get $stride))) (local.get $stride)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $row (i32.lt_u (local.get $i) (local.get $count))))))

  ;; Writes the float16 row at `row` (`stride` bytes) as float32 at `floats`.
  (func (export "fromHalves") (param $row i32) (param $stride i32) (param $floats i32)
    (local $j i32) (local $h v128) (local $at i32)
    (loop $step
      (local.set $h (v128.load (i32.add (local.get $row) (local.get $j))))
      (local.set $at (i32.add (local.get $floats) (i32.shl (local.get $j) (i32.const 1))))
      (v128.store offset=0 (local.get $at) (call $widenHalves (i32x4.extend_low_i16x8_u (local.get $h))))
      (v128.store offset=16 (local.get $at) (call $widenHalves (i32x4.extend_high_i16x8_u (local.get $h))))
      (local.set $j (i32.add (local.get $j) (i32.const 16)))
      (br_if $step (i32.lt_u (local.get $j) (local.get $stride)))))

  ;; The high two float32 lanes of `v`, as float64.
  (func $highPair (param $v v128) (result v128)
    (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))

  ;; The sum of the two float64 lanes.
  (func $pairSum (param $v v128) (result f64)
    (f64.add (f64x2.extract_lane 0 (local.get $v)) (f64x2.extract_lane 1 (local.get $v))))

  ;; `sum` plus the products of the low 8 int8 codes at `at` with the int16 query `low`, pairwise added into int32.
  (func $dotLow (param $sum v128) (param $at i32) (param $low v128) (result v128)
    (i32x4.add
      (local.get $sum)
      (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (v128.load (local.get $at))) (local.get $low))))

  ;; The same for the high 8 codes at `at`.
  (func $dotHigh (param $sum v128) (param $at i32) (param $high v128) (result v128)
    (i32x4.add
      (local.get $sum)
      (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (v128.load (local.get $at))) (local.get $high))))

  ;; out[r] = the weighted distance of row r of `blocks` from the query, for `count` blocks of 32 rows in order: the
  ;; sum, over the rows' `groups` groups of four sign bits, of the query's table for the group at the row's four bits.
  ;; A block holds 16 bytes a group, and in them row r's bits are the low half of byte r, or for r ≥ 16 the high half
  ;; of byte r − 16 (see $placeBits), so that one swizzle looks up 16 rows. A table's entries are at most 60, so four
  ;; groups add up within a byte; a 16-bit lane's total is at most 15 a dimension, and 4,096 dimensions fit.
  ;; The blocks are read in tiles of 32 (4,096 bytes of `out`): a tight loop first reads one word of each cache line of
  ;; the tile, so that its lines come from memory together, and then the tile is weighed from the cache. Past what the
  ;; cache holds, weighing straight from memory waited on each line in turn and cost several times as much a row as
  ;; weighing from the cache; with the tiles it costs little more than from the cache.
  (func (export "weighted")
    (param $blocks i32) (param $count i32) (param $groups i32) (param $tables i32) (param $out i32)
    (local $end i32) (local $g i32) (local $table i32) (local $four i32) (local $bits v128) (local $entries v128)
    (local $low v128) (local $high v128)
    (local $rows0 v128) (local $rows8 v128) (local $rows16 v128) (local $rows24 v128)
    (local $tileEnd i32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 7))))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (if (i32.ge_u (local.get $out) (local.get $tileEnd))
          (then
            ;; A block's results take 128 bytes of `out`.
            (local.set $tileEnd (i32.add (local.get $out) (i32.const 4096)))
            (if (i32.gt_u (local.get $tileEnd) (local.get $end)) (then (local.set $tileEnd (local.get $end))))
            (call $touchLines
              (local.get $blocks)
              (i32.mul
                (i32.shr_u (i32.sub (local.get $tileEnd) (local.get $out)) (i32.const 7))
                (i32.shl (local.get $groups) (i32.const 4)))
              (local.get $out))))
        (local.set $rows0 (v128.const i32x4 0 0 0 0))
        (local.set $rows8 (v128.const i32x4 0 0 0 0))
        (local.set $rows16 (v128.const i32x4 0 0 0 0))
        (local.set $rows24 (v128.const i32x4 0 0 0 0))
        (local.set $table (local.get $tables))
        (local.set $g (i32.const 0))
        (loop $fours
          (local.set $low (v128.const i32x4 0 0 0 0))
          (local.set $high (v128.const i32x4 0 0 0 0))
          (local.set $four (i32.add (local.get $table) (i32.const 64)))
          (loop $group
            (local.set $bits (v128.load (local.get $blocks)))
            (local.set $entries (v128.load (local.get $table)))
            (local.set $low
              (i8x16.add
                (local.get $low)
                (i8x16.swizzle
                  (local.get $entries)
                  (v128.and (local.get $bits) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))))
            (local.set $high
              (i8x16.add
                (local.get $high)
                (i8x16.swizzle (local.get $entries) (i8x16.shr_u (local.get $bits) (i32.const 4)))))
            (local.set $blocks (i32.add (local.get $blocks) (i32.const 16)))
            (local.set $table (i32.add (local.get $table) (i32.const 16)))
            (br_if $group (i32.lt_u (local.get $table) (local.get $four))))
          (local.set $rows0 (i16x8.add (local.get $rows0) (i16x8.extend_low_i8x16_u (local.get $low))))
          (local.set $rows8 (i16x8.add (local.get $rows8) (i16x8.extend_high_i8x16_u (local.get $low))))
          (local.set $rows16 (i16x8.add (local.get $rows16) (i16x8.extend_low_i8x16_u (local.get $high))))
          (local.set $rows24 (i16x8.add (local.get $rows24) (i16x8.extend_high_i8x16_u (local.get $high))))
          (local.set $g (i32.add (local.get $g) (i32.const 4)))
          (br_if $fours (i32.lt_u (local.get $g) (local.get $groups))))
        (call $storeWidened (local.get $out) (local.get $rows0))
        (call $storeWidened (i32.add (local.get $out) (i32.const 32)) (local.get $rows8))
        (call $storeWidened (i32.add (local.get $out) (i32.const 64)) (local.get $rows16))
        (call $storeWidened (i32.add (local.get $out) (i32.const 96)) (local.get $rows24))
        (local.set $out (i32.add (local.get $out) (i32.const 128)))
        (br $block))))

  ;; Reads one word of each 64-byte line of the `bytes` bytes at `from`, so that they are in the cache when they are
  ;; read again, and stores what it read at `scratch` (which the caller overwrites), so that the reads are not dropped.
  (func $touchLines (param $from i32) (param $bytes i32) (param $scratch i32)
    (local $end i32) (local $read i32)
    (local.set $end (i32.add (local.get $from) (local.get $bytes)))
    (loop $line
      (local.set $read (i32.or (local.get $read) (i32.load (local.get $from))))
      (local.set $from (i32.add (local.get $from) (i32.const 64)))
      (br_if $line (i32.lt_u (local.get $from) (local.get $end))))
    (i32.store (local.get $scratch) (local.get $read)))

  ;; Reads one word of each 64-byte line of the `count` rows (`stride` bytes each) of `codes` whose int32 ids lie at
  ;; `ids`, as $touchLines does for consecutive lines, and stores what it read at `scratch`. The loop over a row's lines
  ;; is $touchLines' own, written out: calling $touchLines per row made large scans measurably slower.
  (func $touchRows (param $codes i32) (param $ids i32) (param $count i32) (param $stride i32) (param $scratch i32)
    (local $end i32) (local $row i32) (local $rowEnd i32) (local $read i32)
    (local.set $end (i32.add (local.get $ids) (i32.shl (local.get $count) (i32.const 2))))
    (loop $each
      (local.set $row (i32.add (local.get $codes) (i32.mul (i32.load (local.get $ids)) (local.get $stride))))
      (local.set $rowEnd (i32.add (local.get $row) (local.get $stride)))
      (loop $line
        (local.set $read (i32.or (local.get $read) (i32.load (local.get $row))))
        (local.set $row (i32.add (local.get $row) (i32.const 64)))
        (br_if $line (i32.lt_u (local.get $row) (local.get $rowEnd))))
      (local.set $ids (i32.add (local.get $ids) (i32.const 4)))
      (br_if $each (i32.lt_u (local.get $ids) (local.get $end))))
    (i32.store (local.get $scratch) (local.get $read)))

  ;; Stores the eight unsigned 16-bit lanes of `v` as int32 at `at`.
  (func $storeWidened (param $at i32) (param $v v128)
    (v128.store offset=0 (local.get $at) (i32x4.extend_low_i16x8_u (local.get $v)))
    (v128.store offset=16 (local.get $at) (i32x4.extend_high_i16x8_u (local.get $v))))

  ;; Writes the 16 sign bits `mask` of groups `group` to `group` + 3 into row `row` (0 to 31) of the block at `block`.
  (func $placeBits (param $block i32) (param $row i32) (param $group i32) (param $mask i32)
    (local $at i32) (local $end i32) (local $shift i32) (local $keep i32)
    (local.set $at
      (i32.add
        (i32.add (local.get $block) (i32.shl (local.get $group) (i32.const 4)))
        (i32.and (local.get $row) (i32.const 15))))
    (local.set $end (i32.add (local.get $at) (i32.const 64)))
    (local.set $shift (i32.shr_u (i32.and (local.get $row) (i32.const 16)) (i32.const 2)))
    (local.set $keep (i32.xor (i32.shl (i32.const 15) (local.get $shift)) (i32.const 255)))
    (loop $group
      (i32.store8
        (local.get $at)
        (i32.or
          (i32.and (i32.load8_u (local.get $at)) (local.get $keep))
          (i32.shl (i32.and (local.get $mask) (i32.const 15)) (local.get $shift))))
      (local.set $mask (i32.shr_u (local.get $mask) (i32.const 4)))
      (local.set $at (i32.add (local.get $at) (i32.const 16)))
      (br_if $group (i32.lt_u (local.get $at) (local.get $end)))))

  ;; Writes to `ids`, in order, the rows whose distance (int32, for `rows` rows) is below `cut`, and the first `ties` at
  ;; `cut`; returns how many it wrote.
  (func (export "within")
    (param $distances i32) (param $rows i32) (param $cut i32) (param $ties i32) (param $ids i32) (result i32)
    (local $row i32) (local $distance i32) (local $written i32)
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $row) (local.get $rows)))
        (local.set $distance (i32.load (i32.add (local.get $distances) (i32.shl (local.get $row) (i32.const 2)))))
        (if (i32.or
              (i32.lt_u (local.get $distance) (local.get $cut))
              (i32.and (i32.eq (local.get $distance) (local.get $cut)) (i32.gt_s (local.get $ties) (i32.const 0))))
          (then
            (local.set $ties (i32.sub (local.get $ties) (i32.eq (local.get $distance) (local.get $cut))))
            (i32.store (i32.add (local.get $ids) (i32.shl (local.get $written) (i32.const 2))) (local.get $row))
            (local.set $written (i32.add (local.get $written) (i32.const 1)))))
        (local.set $row (i32.add (local.get $row) (i32.const 1)))
        (br $each)))
    (local.get $written))

  ;; Writes the float32 row at `floats` (`stride` floats, zero past the vector's dimensions) as int8 codes at `code`,
  ;; scaled so that its largest component is ±127 and rounded to nearest (ties to even), and a bit per code, set where
  ;; the code is positive, as row `row` of the block of sign bits at `block` (see "weighted"); returns the sum of the
  ;; codes' squares (0 for a zero vector).
  (func (export "quantize")
    (param $floats i32) (param $stride i32) (param $code i32) (param $block i32) (param $row i32) (result i32)
    (local $j i32) (local $at i32) (local $largest v128) (local $scale v128) (local $top f32)
    (local $low v128) (local $high v128) (local $codes v128) (local $squares v128)
    (loop $find
      (local.set $largest
        (f32x4.max (local.get $largest) (f32x4.abs (v128.load (i32.add (local.get $floats) (local.get $j))))))
      (local.set $j (i32.add (local.get $j) (i32.const 16)))
      (br_if $find (i32.lt_u (local.get $j) (i32.shl (local.get $stride) (i32.const 2)))))
    (local.set $top
      (f32.max
        (f32.max (f32x4.extract_lane 0 (local.get $largest)) (f32x4.extract_lane 1 (local.get $largest)))
        (f32.max (f32x4.extract_lane 2 (local.get $largest)) (f32x4.extract_lane 3 (local.get $largest)))))
    (if (f32.eq (local.get $top) (f32.const 0))
      (then (local.set $scale (v128.const f32x4 0 0 0 0)))
      (else (local.set $scale (f32x4.splat (f32.div (f32.const 127) (local.get $top))))))
    (local.set $j (i32.const 0))
    (loop $step
      (local.set $at (i32.add (local.get $floats) (i32.shl (local.get $j) (i32.const 2))))
      (local.set $low
        (i16x8.narrow_i32x4_s
          (call $scaled (v128.load offset=0 (local.get $at)) (local.get $scale))
          (call $scaled (v128.load offset=16 (local.get $at)) (local.get $scale))))
      (local.set $high
        (i16x8.narrow_i32x4_s
          (call $scaled (v128.load offset=32 (local.get $at)) (local.get $scale))
          (call $scaled (v128.load offset=48 (local.get $at)) (local.get $scale))))
      (local.set $codes (i8x16.narrow_i16x8_s (local.get $low) (local.get $high)))
      (v128.store (i32.add (local.get $code) (local.get $j)) (local.get $codes))
      ;; -code is negative exactly where code is positive (codes lie within ±127).
      (call $placeBits
        (local.get $block)
        (local.get $row)
        (i32.shr_u (local.get $j) (i32.const 2))
        (i8x16.bitmask (i8x16.neg (local.get $codes))))
      (local.set $squares
        (i32x4.add
          (local.get $squares)
          (i32x4.add
            (i32x4.dot_i16x8_s (local.get $low) (local.get $low))
            (i32x4.dot_i16x8_s (local.get $high) (local.get $high)))))
      (local.set $j (i32.add (local.get $j) (i32.const 16)))
      (br_if $step (i32.lt_u (local.get $j) (local.get $stride))))
    (call $lanes (local.get $squares)))

  ;; Four float32 lanes times `scale`, rounded to the nearest int32.
  (func $scaled (param $v v128) (param $scale v128) (result v128)
    (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.mul (local.get $v) (local.get $scale)))))

  ;; The dot product of one int8 row with the int16 query, 16 dimensions a step; two sums in turn keep the steps apart.
  (func $dot (param $row i32) (param $stride i32) (param $query i32) (result i32)
    (local $j i32) (local $low v128) (local $high v128) (local $codes v128)
    (loop $chunk
      (local.set $codes (v128.load (i32.add (local.get $row) (local.get $j))))
      (local.set $low
        (i32x4.add
          (local.get $low)
          (i32x4.dot_i16x8_s
            (i16x8.extend_low_i8x16_s (local.get $codes))
            (v128.load (i32.add (local.get $query) (i32.shl (local.get $j) (i32.const 1)))))))
      (local.set $high
        (i32x4.add
          (local.get $high)
          (i32x4.dot_i16x8_s
            (i16x8.extend_high_i8x16_s (local.get $codes))
            (v128.load offset=16 (i32.add (local.get $query) (i32.shl (local.get $j) (i32.const 1)))))))
      (local.set $j (i32.add (local.get $j) (i32.const 16)))
      (br_if $chunk (i32.lt_u (local.get $j) (local.get $stride))))
    (call $lanes (i32x4.add (local.get $low) (local.get $high))))

  ;; The sum of the four int32 lanes.
  (func $lanes (param $v v128) (result i32)
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v)))
      (i32.add (i32x4.extract_lane 2 (local.get $v)) (i32x4.extract_lane 3 (local.get $v))))))
