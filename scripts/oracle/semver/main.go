// Command semver-oracle writes golden vectors for src/semver from the real
// github.com/blang/semver/v4 v4.0.0 module. See README.md for how to run it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/blang/semver/v4"
)

var rng = rand.New(rand.NewPCG(20240601, 4))

func pick(xs []string) string { return xs[rng.IntN(len(xs))] }
func chance(p float64) bool   { return rng.Float64() < p }

var (
	normalNums = []string{"0", "1", "2", "3", "1", "0", "2", "4", "9", "10", "11", "42", "123"}
	oddNums    = []string{"", "00", "01", "007", "18446744073709551615", "18446744073709551616",
		"99999999999999999999", "9223372036854775807", "9223372036854775808", "x", "X", "a", "-1", "+1",
		"1a", " 1", "1 ", "٣", "１", "*", "v1", "1_0", "0x1"}
	normalIDs = []string{"alpha", "beta", "rc", "0", "1", "2", "11", "alpha1", "a-b", "x", "xyz", "X", "-", "rc-1", "Z", "a"}
	oddIDs    = []string{"", "01", "00", "é", "_", "18446744073709551615", "18446744073709551616",
		"123456789012345678901", "a b", "a+b", "!", "\t", "ß", "😀", "x.x"}
	corruptChars = []string{"0", "1", "9", ".", "-", "+", "x", "X", "v", " ", "  ", "~", "^", "<", ">", "=", "!",
		"|", "||", "*", "\t", "a", "é", "_", "\"", "\\", "\n", "\u00a0", "\u200b", "\x7f", "٣"}
)

func num() string {
	if chance(0.85) {
		return pick(normalNums)
	}
	return pick(oddNums)
}

func ident(odd float64) string {
	if chance(odd) {
		return pick(oddIDs)
	}
	return pick(normalIDs)
}

func idents(odd float64) string {
	n := 1 + rng.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = ident(odd)
	}
	return strings.Join(parts, ".")
}

func corrupt(s string) string {
	n := 1 + rng.IntN(2)
	for k := 0; k < n; k++ {
		switch rng.IntN(3) {
		case 0: // insert
			i := rng.IntN(len(s) + 1)
			for i < len(s) && !utf8.RuneStart(s[i]) {
				i++
			}
			s = s[:i] + pick(corruptChars) + s[i:]
		case 1: // delete a byte (keep UTF-8 valid by only deleting ASCII)
			if len(s) > 0 {
				i := rng.IntN(len(s))
				if s[i] < 0x80 {
					s = s[:i] + s[i+1:]
				}
			}
		case 2: // replace an ASCII byte
			if len(s) > 0 {
				i := rng.IntN(len(s))
				if s[i] < 0x80 {
					s = s[:i] + pick(corruptChars) + s[i+1:]
				}
			}
		}
	}
	if !utf8.ValidString(s) {
		panic("generated invalid UTF-8")
	}
	return s
}

// genVersion produces a version-like string, valid more often than not.
func genVersion() string {
	var b strings.Builder
	nparts := 3
	if chance(0.06) {
		nparts = 1 + rng.IntN(4)
	}
	for i := 0; i < nparts; i++ {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(num())
	}
	if chance(0.35) {
		b.WriteString("-" + idents(0.12))
	}
	if chance(0.2) {
		b.WriteString("+" + idents(0.12))
	}
	s := b.String()
	if chance(0.15) {
		s = corrupt(s)
	}
	return s
}

func genWildcard() string {
	n := func() string { return pick([]string{"0", "1", "2", "3", "1", "2", "10"}) }
	switch rng.IntN(14) {
	case 0:
		return n() + ".x"
	case 1:
		return n() + "." + n() + ".x"
	case 2:
		return n() + ".x.x"
	case 3:
		return n() + ".X"
	case 4:
		return n() + "." + n() + "." + n() + "-x"
	case 5:
		return n() + ".x-beta"
	case 6:
		return "x." + n() + "." + n()
	case 7:
		return n() + "." + n() + "." + n() + ".x"
	case 8:
		return n() + "x." + n() + "." + n()
	case 9:
		return n() + "." + n() + "." + n() + "-" + pick([]string{"xyz", "x", "alpha.x", "rc.1"})
	case 10:
		return n() + "." + pick([]string{"-5", "+1", "01", "9223372036854775807", "99999999999999999999", "a"}) + ".x"
	case 11:
		return pick([]string{"9223372036854775807", "99999999999999999999", "01", "18446744073709551615"}) + ".x"
	case 12:
		return n() + ".x.x.x"
	default:
		return n() + "." + n() + ".x+build"
	}
}

var ops = []string{"", "", "<", "<=", ">", ">=", "=", "==", "!", "!=", ">", ">=", "<"}
var oddOps = []string{"~", "^", "=>", "=<", "<>", "!!", "===", "v", "x", "*", "\t", "\t>", "a", "|", "-", "é"}

func genComparator() string {
	op := pick(ops)
	if chance(0.08) {
		op = pick(oddOps)
	}
	if chance(0.15) {
		op += pick([]string{" ", "  ", " \t"})
	}
	var v string
	if chance(0.35) {
		v = genWildcard()
	} else {
		v = genVersion()
	}
	if chance(0.02) {
		v = pick([]string{"x", "", "a", "1", "||", "xx", "<", "1.0"})
	}
	return op + v
}

func cleanVersion() string {
	s := pick(normalNums) + "." + pick(normalNums) + "." + pick(normalNums)
	if chance(0.3) {
		s += "-" + strings.ReplaceAll(idents(0), "x", "y")
	}
	if chance(0.1) {
		s += "+" + strings.ReplaceAll(idents(0), "x", "y")
	}
	return s
}

// genCleanRange produces ranges that usually parse: known operators, valid versions and the
// wildcard forms blang documents.
func genCleanRange() string {
	var b strings.Builder
	n := 1 + rng.IntN(4)
	for i := 0; i < n; i++ {
		if i > 0 {
			if chance(0.3) {
				b.WriteString(pick([]string{" || ", " ||  ", "  || "}))
			} else {
				b.WriteString(pick([]string{" ", " ", "  "}))
			}
		}
		b.WriteString(pick(ops))
		if chance(0.15) {
			b.WriteString(" ")
		}
		if chance(0.3) {
			n := func() string { return pick([]string{"0", "1", "2", "3", "1", "2", "10"}) }
			b.WriteString(pick([]string{n() + ".x", n() + "." + n() + ".x", n() + ".x.x"}))
		} else {
			b.WriteString(cleanVersion())
		}
	}
	return b.String()
}

func genRange() string {
	var b strings.Builder
	if chance(0.05) {
		b.WriteString(pick([]string{" ", "  ", "|| ", "||"}))
	}
	n := 1 + rng.IntN(4)
	for i := 0; i < n; i++ {
		if i > 0 {
			if chance(0.3) {
				b.WriteString(pick([]string{" || ", "||", " ||", "|| ", " || || ", "  ||  ", " | ", " |||| "}))
			} else {
				b.WriteString(pick([]string{" ", " ", "  ", "\t", " , "}))
			}
		}
		b.WriteString(genComparator())
	}
	if chance(0.05) {
		b.WriteString(pick([]string{" ", "  ", " ||", "||", " x", " a"}))
	}
	s := b.String()
	if chance(0.05) {
		s = corrupt(s)
	}
	return s
}

// ---- outputs ----

type versionVec struct {
	In    string   `json:"in"`
	Err   string   `json:"err,omitempty"`
	Out   string   `json:"out,omitempty"`
	Nums  []string `json:"nums,omitempty"`
	Pre   []string `json:"pre,omitempty"` // "n:<num>" or "a:<str>"
	Build []string `json:"build,omitempty"`
}

func describe(in string, v semver.Version, err error) versionVec {
	if err != nil {
		return versionVec{In: in, Err: err.Error()}
	}
	r := versionVec{In: in, Out: v.String(), Nums: []string{fmt.Sprint(v.Major), fmt.Sprint(v.Minor), fmt.Sprint(v.Patch)}, Build: v.Build}
	for _, p := range v.Pre {
		if p.IsNum {
			r.Pre = append(r.Pre, fmt.Sprintf("n:%d", p.VersionNum))
		} else {
			r.Pre = append(r.Pre, "a:"+p.VersionStr)
		}
	}
	return r
}

type prVec struct {
	In    string `json:"in"`
	Err   string `json:"err,omitempty"`
	Out   string `json:"out,omitempty"`
	IsNum bool   `json:"isNum,omitempty"`
}

type compareFile struct {
	Versions []string `json:"versions"`
	// Matrix[i][j] is '<', '=' or '>' for Compare(Versions[i], Versions[j]).
	Matrix []string `json:"matrix"`
	// Pairs of random versions: [a, b, "<"|"="|">"].
	Pairs [][3]string `json:"pairs"`
}

type rangeVec struct {
	Range string `json:"range"`
	Err   string `json:"err,omitempty"`
	// Results for each probe version: '1' true, '0' false, 'p' panic.
	Res string `json:"res,omitempty"`
}

type rangeFile struct {
	Probes []string   `json:"probes"`
	Ranges []rangeVec `json:"ranges"`
}

func cmpChar(c int) string {
	switch c {
	case -1:
		return "<"
	case 1:
		return ">"
	}
	return "="
}

func eval(r semver.Range, v semver.Version) (res byte) {
	defer func() {
		if recover() != nil {
			res = 'p'
		}
	}()
	if r(v) {
		return '1'
	}
	return '0'
}

var handVersions = []string{
	"", " ", ".", "..", "...", "1", "1.0", "1.0.0", "0.0.0", "1.2.3", "v1.2.3", "1.2.3 ", " 1.2.3", "01.2.3", "1.02.3",
	"1.2.03", "00.0.0", "1..3", ".2.3", "1.2.", "1.2.3.4", "1.2.3-", "1.2.3+", "1.2.3-+", "1.2.3-.", "1.2.3-a.",
	"1.2.3-a..b", "1.2.3+a..b", "1.2.3+.", "1.2.3-01", "1.2.3-0", "1.2.3-00", "1.2.3-0a", "1.2.3-a0", "1.2.3+01",
	"1.2.3-alpha.1+build.5", "1.2.3+build-1.x", "1.2.3-rc-1+b+c", "1.2.3-a+b-c", "1.2.3+b-c-d", "1.2.3-x-y-z",
	"18446744073709551615.18446744073709551615.18446744073709551615",
	"18446744073709551616.0.0", "0.18446744073709551616.0", "0.0.18446744073709551616",
	"99999999999999999999999.0.0", "1.2.3-18446744073709551615", "1.2.3-18446744073709551616",
	"1.2.3-99999999999999999999", "9007199254740993.0.0", "1.2.3-9007199254740993",
	"a.b.c", "1.b.c", "1.2.c", "1.2.3a", "1.2.3-é", "é.1.1", "1.é.1", "1.1.é", "1.2.3+é", "1.2.3-a_b",
	"1.2.3-\"q\"", "1.2.3-a\\b", "1.2.3-\t", "1.2.3-\n", "1.2.3-\x7f", "1.2.3-\u00a0", "1.2.3-\u200b",
	"1.2.3-😀", "1.2.3-\U0010ffff", "1.2.3-\ufeff", "1.2.3-\u00ad", "1.2.3-٣", "٣.1.1", "１.1.1",
	"1.2.3-\x00", "1.2.3-\x1b", "1.2.3-\u0085", "1.2.3-\u2028", "1.2.3-\ue000", "1.2.3-\ufffd",
	"+1.2.3", "-1.2.3", "1.-2.3", "1.2.-3", "1.2.+3", "1.2.3--", "1.2.3-a-", "1.2.3++", "1.2.x", "1.x.x", "x.x.x",
	"1.2.3-X", "1.2.3-Z.z.A.a.0.9", "0.0.0-0", "0.0.0+0", "1.0.0-alpha.beta", "1.0.0-beta.11", "1.0.0-rc.1",
}

var probes = []string{
	"0.0.0", "0.0.1-0", "0.0.1", "0.1.0", "0.9.9", "1.0.0-0", "1.0.0-alpha", "1.0.0-beta.2", "1.0.0-x", "1.0.0-xyz",
	"1.0.0", "1.0.0+build.1", "1.0.1", "1.1.0-rc.1", "1.1.0", "1.1.1", "1.2.0-0", "1.2.0", "1.2.3", "1.2.9",
	"1.3.0-0", "1.3.0", "1.9.9", "2.0.0-0", "2.0.0-rc.1", "2.0.0", "2.0.1", "2.1.0", "2.3.0", "3.0.0-alpha",
	"3.0.0", "3.1.4", "3.2.0", "4.0.0", "10.0.0", "11.0.0", "0.0.0-x", "9223372036854775807.0.0",
	"9223372036854775808.0.0", "18446744073709551615.18446744073709551615.18446744073709551615",
}

var handRanges = []string{
	"", " ", "  ", "||", "|| ", " ||", "1.0.0 ||", "|| 1.0.0", "1.0.0 || || 2.0.0", "1.0.0 || || || 2.0.0",
	">1.0.0", ">=1.0.0", "<1.0.0", "<=1.0.0", "=1.0.0", "==1.0.0", "1.0.0", "!1.0.0", "!=1.0.0",
	"> 1.0.0", ">= 1.0.0", ">=  1.0.0", "< 1.0.0", "= 1.0.0", "! 1.0.0", "!= 1.0.0", ">1.0.0 <2.0.0",
	">1.0.0  <2.0.0", ">1.0.0 <2.0.0 || >3.0.0 !4.2.1", "<2.0.0 || >=3.0.0", ">1.0.0 <3.0.0 !2.0.3-beta.2",
	"1.x", "1.2.x", "1.x.x", ">1.x.x", ">=1.x", "<=1.x", ">1.x", "<1.x", "!=1.x", "!1.2.x", "=1.2.x", "==1.x",
	"x", "x.x.x", "1.X", "1.0.0-xyz", "!=1.0.0-xyz", ">1.0.0-x", "<1.0.0-x", "<=1.0.0-x", ">=1.0.0-x",
	"~1.2.x", "^1.x", "v1.x", "x1.0.0", "~1.2.0", "^1.2.0", "1.2.0 - 2.0.0", "*", ">=1.0", "1.0", "v1.0.0",
	">1.00.1", ">01.0.0", "1", "a", "ab", "a b", ">", "<", "<=", "=>1.0.0", "<>1.0.0", ">1.0.0||<2.0.0",
	">1.0.0 ||<2.0.0", "1.0.0 2.0.0", "1.2.3.x", "1.-5.x", "1.+5.x", "9223372036854775807.x",
	"1.9223372036854775807.x", "99999999999999999999.x", "1.99999999999999999999.x", "01.x", "1.01.x",
	"\t>1.0.0", ">\t1.0.0", "> \t1.0.0", "é1.0.0", "é", "1.0.0 é", "٣.0.0", ">٣.0.0", "1 || 2", "> 1.0.0 || < 0.5.0",
	"1.0.0 - 2.0.0", ">= 1.0.0 <= 2.0.0", ">=1.0.0 !1.5.0 <2.0.0", ">1.0.0-alpha <1.0.0", "<1.0.0",
	">=4.1.0 <4.2.0", ">=0.0.0", "<0.0.0", "!0.0.0", ">18446744073709551615.18446744073709551615.18446744073709551615",
	">=18446744073709551616.0.0", "1.0.0+build", ">1.0.0+build", "1.0.0 || 2.0.0 || 3.0.0", "1.0.0 ||  || 2.0.0",
	"1.0.0 | 2.0.0", "1.0.0 ||| 2.0.0", "x || 1.0.0", "1.0.0 || x", "1.0.0 || xx", ">=1.x.x <2.x.x", "<=1.2.x", ">1.2.x",
	"<1.2.x", "!=1.2.x", "1.x.x.x", ">=x.1.0", "1x.0.0", "1.0.0x", ">=1.0.0x", "<= 1.x", "!= 1.x", "== 1.x",
	"1.0.0 = 2.0.0", "1.0.0= 2.0.0", "1.0.0 =2.0.0", ">1.0.0 > 2.0.0", "a> 1.0.0", ">=0.1.0 <0.2.0-0",
}

func main() {
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: semver-oracle <testdata-dir>")
		os.Exit(2)
	}
	dir := flag.Arg(0)

	// versions.json: Parse
	var vins []string
	vins = append(vins, handVersions...)
	seen := map[string]bool{}
	for _, s := range vins {
		seen[s] = true
	}
	for len(vins) < 4000 {
		s := genVersion()
		if !seen[s] {
			seen[s] = true
			vins = append(vins, s)
		}
	}
	var vvecs []versionVec
	var valid []string
	for _, s := range vins {
		v, err := semver.Parse(s)
		vvecs = append(vvecs, describe(s, v, err))
		if err == nil {
			valid = append(valid, s)
		}
	}
	write(dir, "versions.json", vvecs)

	// tolerant.json: ParseTolerant
	tins := append([]string{}, handVersions...)
	tins = append(tins, "v", "vv1.0.0", "v1", "v1.2", "1.2", "01.02.03", "000.000.000", "0.0", "00", "v1.2-beta", "1.2+b",
		"1-beta", "1.02-rc", " \t v1.2.3 \n", "\u00a01.2.3", "\ufeff1.2.3", "\u20281.2.3\u3000", "é", "é.é", "1.é",
		"1.0é", "1.00-0", "1.0.00-01", "v0001.0002.0003-0004+0005", "1.2.0-beta", "1.2.00-beta", ".1.2")
	for i := 0; i < 1000; i++ {
		s := genVersion()
		if chance(0.3) {
			s = "v" + s
		}
		if chance(0.2) {
			s = pick([]string{" ", "\t", "\n", "\u00a0", "\u3000"}) + s
		}
		if chance(0.2) {
			ps := strings.SplitN(s, ".", 3)
			s = strings.Join(ps[:1+rng.IntN(len(ps))], ".")
		}
		if chance(0.2) {
			s = strings.ReplaceAll(s, ".", ".0")
		}
		tins = append(tins, s)
	}
	var tvecs []versionVec
	for _, s := range tins {
		v, err := semver.ParseTolerant(s)
		tvecs = append(tvecs, describe(s, v, err))
	}
	write(dir, "tolerant.json", tvecs)

	// prversions.json: NewPRVersion
	pins := append([]string{}, normalIDs...)
	pins = append(pins, oddIDs...)
	pins = append(pins, "0", "9", "10", "010", "0-0", "-0", "0a", "a0", "9223372036854775808", "1.2", "A-Z", "--", "x-y")
	for i := 0; i < 300; i++ {
		pins = append(pins, corrupt(ident(0.2)))
	}
	var pvecs []prVec
	for _, s := range pins {
		p, err := semver.NewPRVersion(s)
		if err != nil {
			pvecs = append(pvecs, prVec{In: s, Err: err.Error()})
		} else {
			pvecs = append(pvecs, prVec{In: s, Out: p.String(), IsNum: p.IsNum})
		}
	}
	write(dir, "prversions.json", pvecs)

	// compare.json
	pool := []string{}
	for _, s := range handVersions {
		if _, err := semver.Parse(s); err == nil {
			pool = append(pool, s)
		}
	}
	pool = append(pool, probes...)
	for _, s := range valid {
		if len(pool) >= 120 {
			break
		}
		pool = append(pool, s)
	}
	cf := compareFile{Versions: pool}
	for _, a := range pool {
		var row strings.Builder
		va := semver.MustParse(a)
		for _, b := range pool {
			row.WriteString(cmpChar(va.Compare(semver.MustParse(b))))
		}
		cf.Matrix = append(cf.Matrix, row.String())
	}
	for i := 0; i < 3000; i++ {
		a := valid[rng.IntN(len(valid))]
		var b string
		if chance(0.5) {
			b = valid[rng.IntN(len(valid))]
		} else {
			// a near neighbour: same string with one numeric tweak or extra identifier
			b = a
			switch rng.IntN(3) {
			case 0:
				b = strings.Replace(b, pick([]string{"0", "1", "2"}), pick([]string{"0", "1", "2", "3"}), 1)
			case 1:
				if !strings.Contains(b, "+") {
					b += pick([]string{"-0", "-a", ".1", ".a", "+b"})
				}
			}
			if _, err := semver.Parse(b); err != nil {
				b = a
			}
		}
		c := semver.MustParse(a).Compare(semver.MustParse(b))
		cf.Pairs = append(cf.Pairs, [3]string{a, b, cmpChar(c)})
	}
	write(dir, "compare.json", cf)

	// ranges.json
	rf := rangeFile{Probes: probes}
	var pv []semver.Version
	for _, p := range probes {
		pv = append(pv, semver.MustParse(p))
	}
	rins := append([]string{}, handRanges...)
	rseen := map[string]bool{}
	for _, s := range rins {
		rseen[s] = true
	}
	for len(rins) < 9000 {
		var s string
		if len(rins) < 4000 {
			s = genCleanRange()
		} else {
			s = genRange()
		}
		if !rseen[s] {
			rseen[s] = true
			rins = append(rins, s)
		}
	}
	for _, s := range rins {
		r, err := semver.ParseRange(s)
		if err != nil {
			rf.Ranges = append(rf.Ranges, rangeVec{Range: s, Err: err.Error()})
			continue
		}
		res := make([]byte, len(pv))
		for i, v := range pv {
			res[i] = eval(r, v)
		}
		rf.Ranges = append(rf.Ranges, rangeVec{Range: s, Res: string(res)})
	}
	write(dir, "ranges.json", rf)
}

func write(dir, name string, v any) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	// One vector per line keeps diffs readable.
	switch x := v.(type) {
	case []versionVec:
		writeLines(f, x)
	case []prVec:
		writeLines(f, x)
	case rangeFile:
		probes, _ := marshal(x.Probes)
		f.WriteString("{\"probes\": ")
		f.Write(probes)
		f.WriteString(",\n\"ranges\": ")
		writeLines(f, x.Ranges)
		f.WriteString("}\n")
	default:
		enc.SetIndent("", " ")
		if err := enc.Encode(v); err != nil {
			panic(err)
		}
	}
}

func writeLines[T any](f *os.File, xs []T) {
	f.WriteString("[\n")
	for i, x := range xs {
		b, err := marshal(x)
		if err != nil {
			panic(err)
		}
		f.Write(b)
		if i < len(xs)-1 {
			f.WriteString(",")
		}
		f.WriteString("\n")
	}
	f.WriteString("]\n")
}

func marshal(v any) ([]byte, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(sb.String(), "\n")), nil
}
