// Command oracle writes the golden vectors of src/semver/testdata/masterminds.json from the real
// github.com/Masterminds/semver/v3 (v3.5.0, the version operator-controller v1.11 uses): for each
// constraint, NewConstraint's error text, or one character per probe version ('1': Check is true,
// '0': false). Probe versions are built as operator-controller builds them from a bundle's version
// (semver.New(major, minor, patch, pre, build) of a blang/semver Version).
package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"
)

var probes = []string{
	"0.0.0", "0.0.1", "0.0.3", "0.0.4", "0.1.0", "0.1.5", "0.2.0", "0.2.3", "0.2.9", "0.3.0", "0.9.9",
	"1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.2.2", "1.2.3", "1.2.4", "1.2.99", "1.3.0", "1.9.0", "1.10.0",
	"2.0.0", "2.3.0", "2.3.5", "2.4.0", "2.9.9", "3.0.0", "3.0.1", "3.5.0", "3.6.0", "4.0.0", "4.1.2",
	"5.0.0", "5.9.1", "6.0.0", "10.0.0", "11.0.0", "11.1.0", "11.1.1", "11.2.1", "12.0.0", "100.200.300",
	"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-rc.1", "1.2.3-alpha", "1.2.3-0",
	"1.2.3-1", "1.2.3-beta.10", "1.2.3-beta.9", "1.2.4-alpha", "2.0.0-alpha", "2.0.0-0", "0.2.3-rc1",
	"1.0.0+build.1", "1.2.3+meta", "1.2.3-alpha+meta", "2.0.0+1", "0.0.0-0", "18446744073709551615.0.0",
}

var fixed = []string{
	// the examples of ClusterExtension's API documentation
	">=3.0, <3.6", "0.6.0", "=", "!=1.2.3", "<1.2.3", ">1.2.3", ">=1.2.3", "<=1.2.3",
	"1.2.x", "1.2.X", "1.2.*", ">= 1.2.x", ">= 1.2.X", ">= 1.2.*", "<= 2.x", "<= 2.X", "<= 2.*", "x", "X", "*",
	"~1.2.3", "~1", "~1.x", "~2.3", "~1.2.x", "^1.2.3", "^1.2.x", "^2.3", "^2.x", "^0.2.3", "^0.2", "^0.0.3",
	"^0.0", "^0", ">=1.2.3, <2.0.0 || >3.0.0", "^0 || ^3 || ^5",
	// hyphen ranges, operators and their spellings, wildcards, prereleases
	"1.2 - 1.4.5", "1.2.3 - 2.3.4", "1.x - 2.x", "1 - 2", "1.0.0-alpha - 1.0.0", "v1.2.3", "=v1.2.3", "=>1.2",
	"=<1.2", "~>1.2", "~>1", "~0", "~0.0.0", "~*", "^*", "^x", "!=1.x", "!=1.2.x", "!=1.2.3-beta", ">11", ">11.1",
	">1.x", "<1.x", "<=1.2", "<= 1.2.3", ">= 1.0.0-0", ">=1.0.0-alpha", "<2.0.0-0", "^1.0.0-beta", "~1.2.3-beta",
	"1.2.3-beta.9", ">1.2.3-beta.9", "=1.2.3+meta", "1.2.3+other", ">=1.0.0 <2.0.0", ">=1.0.0,<2.0.0",
	">=1.0.0 , <2.0.0", "1.0.0 || 2.0.0", "1.0.0||2.0.0", "  ^1.2  ", ">= 1.2", "> 1.2", "<1.0 || >=3.0",
	"!=4.1.2, >=4", ">0.0.0-0", "*-0", "1.x-alpha", "x.x.x", "1.*.*", "1.x.3", "1.2.3.4", "1.2.3 4.5.6",
	"latest", ">>1", "1.2.3,", "||", "1.0 || ", "a.b.c", "01.2.3", "1.02.3", "1.2.03", "1.2.3-01",
	"99999999999999999999.0.0", "1.2.3-", "1.2.3+", ">=1.2.3-a..b", "1|2", "1.2 -1.4", "1.2- 1.4", " - 1.2",
	"~ 1.2", "^ 1.2", "= 1.2.3", "! =1.2", "1.2.3 - 2", "v1.x", "V1.2", ">=1.2.3\t<2", ">=1.2.3\n", "\t1.2.3",
}

func main() {
	out := "src/semver/testdata"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	pv := make([]*mmsemver.Version, len(probes))
	for i, p := range probes {
		b := bsemver.MustParse(p)
		pre := make([]string, len(b.Pre))
		for j, x := range b.Pre {
			pre[j] = x.String()
		}
		pv[i] = mmsemver.New(b.Major, b.Minor, b.Patch, strings.Join(pre, "."), strings.Join(b.Build, "."))
	}
	constraints := append([]string{}, fixed...)
	// random combinations of the pieces users write
	r := rand.New(rand.NewSource(28))
	ops := []string{"", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^"}
	parts := []string{"0", "1", "2", "3", "10", "x", "X", "*"}
	pres := []string{"", "", "", "-alpha", "-0", "-beta.2", "+meta"}
	seps := []string{" ", ", ", ",", " || ", "||", "  "}
	one := func() string {
		v := parts[r.Intn(len(parts))]
		for n := r.Intn(3); n > 0; n-- {
			v += "." + parts[r.Intn(len(parts))]
		}
		if r.Intn(8) == 0 {
			v = "v" + v
		}
		return ops[r.Intn(len(ops))] + strings.Repeat(" ", r.Intn(2)) + v + pres[r.Intn(len(pres))]
	}
	for i := 0; i < 600; i++ {
		c := one()
		for n := r.Intn(3); n > 0; n-- {
			if r.Intn(6) == 0 {
				c += " - " + one()
			} else {
				c += seps[r.Intn(len(seps))] + one()
			}
		}
		constraints = append(constraints, c)
	}
	type entry struct {
		Constraint string `json:"constraint"`
		Error      string `json:"error,omitempty"`
		Results    string `json:"results,omitempty"`
	}
	entries := make([]entry, 0, len(constraints))
	for _, c := range constraints {
		cs, err := mmsemver.NewConstraint(c)
		if err != nil {
			entries = append(entries, entry{Constraint: c, Error: err.Error()})
			continue
		}
		var sb strings.Builder
		for _, v := range pv {
			if cs.Check(v) {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		entries = append(entries, entry{Constraint: c, Results: sb.String()})
	}
	doc := map[string]any{"module": "github.com/Masterminds/semver/v3@v3.5.0", "probes": probes, "constraints": entries}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(out, "masterminds.json"), append(b, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
