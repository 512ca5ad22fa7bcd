// Command float writes Go-oracle vectors for Go's float formatting (src/gojson/testdata/float.json):
// for each float64 (given by its IEEE-754 bits), encoding/json's text, strconv.FormatFloat(f, 'g', -1, 64),
// strconv.FormatFloat(float64(float32(f)), 'g', -1, 32) and fmt's %v.
//
// Usage: go run . > src/gojson/testdata/float.json
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

func vector(f float64) []any {
	j := any(nil) // json.Marshal refuses NaN and ±Inf
	if b, err := json.Marshal(f); err == nil {
		j = string(b)
	}
	return []any{
		fmt.Sprintf("%016x", math.Float64bits(f)),
		j,
		strconv.FormatFloat(f, 'g', -1, 64),
		strconv.FormatFloat(float64(float32(f)), 'g', -1, 32),
		fmt.Sprintf("%v", f),
	}
}

func main() {
	var fs []float64
	for _, f := range []float64{
		0, math.Copysign(0, -1), 1, -1, 0.1, 0.5, 1.5, 2.5, 3.14159265, 5.25, 100, 1e5, 123456, 999999, 1e6, 1234567,
		1234567.5, 1e7, 1e20, 1e21, 1e22, 123456789012345678, 12345678901234567890, 1e-4, 1e-5, 0.00012345,
		1e-6, 1e-7, 1.2345e-10, 2.5e-7, math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxFloat32,
		math.SmallestNonzeroFloat32, 1 << 53, 1<<53 + 2, 1 << 63, 16777216, 16777217, 0.3, 1.0 / 3, 2.0 / 3,
		math.NaN(), math.Inf(1), math.Inf(-1), 3.4028235e38, 3.5e38, 1e-46, 1.401298464324817e-45,
	} {
		fs = append(fs, f, -f)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1500; i++ { // any bit pattern
		fs = append(fs, math.Float64frombits(r.Uint64()))
	}
	for i := 0; i < 1500; i++ { // values around every decimal exponent where the layout changes
		m := float64(r.IntN(1_000_000)) / math.Pow10(r.IntN(7))
		fs = append(fs, m*math.Pow10(r.IntN(60)-30))
	}
	for i := 0; i < 1500; i++ { // float32 values
		fs = append(fs, float64(math.Float32frombits(r.Uint32())))
	}
	for e := -30; e <= 30; e++ { // powers of ten and their neighbours
		p := math.Pow10(e)
		fs = append(fs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), float64(float32(p)))
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, f := range fs {
		line, err := json.Marshal(vector(f))
		if err != nil {
			panic(err)
		}
		b.Write(line)
		if i < len(fs)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	os.Stdout.WriteString(b.String())
}
