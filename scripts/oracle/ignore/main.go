// Command ignore-oracle writes golden vectors for src/ignore: random .indexignore trees and file paths,
// decided by github.com/joelanford/ignore (the matcher opm uses) on top of go-git's gitignore package.
//
// Regenerate (outside the repository, needs Go and the module proxy):
//
//	mkdir /tmp/ign && cp scripts/oracle/ignore/main.go /tmp/ign && cd /tmp/ign && go mod init oracle/ignore &&
//	go get github.com/joelanford/ignore@v0.1.2 github.com/go-git/go-git/v5@v5.19.1 && go mod tidy &&
//	go run . > /work/main/src/ignore/testdata/vectors.json
package main

import (
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/joelanford/ignore"
)

type ignoreFile struct {
	Dir     string `json:"dir"`
	Content string `json:"content"`
}

type testCase struct {
	// Files are the .indexignore files in the order fs.WalkDir visits them.
	Files   []ignoreFile `json:"files"`
	Paths   []string     `json:"paths"`
	Ignored []bool       `json:"ignored"`
}

var names = []string{"a", "a", "a", "b", "b", "c", "dir", "dir", "a.json", "b.yaml", "a", "b", "c", "dir", "keep.json", "x.yaml", "README.md", "foo.json", "é", "-x", "A", "ab", "a.b", "*", "[a]", "a b", "\\", "bb"}
var dirNames = []string{"", "", "", "a", "b", "dir", "a/b", "-x", "A", "é", "a/dir", "+"}

var atoms = []string{"a", "b", "c", "*", "**", "?", "dir", "keep.json", "*.json", "*.yaml", "x.*", "[a-c]", "[^a]", "[!a]",
	"[a-]", "[", "]", "[]", "[]a]", "\\*", "\\", "\\[", "é", "[é]", "[^é]", "*[^é]", "a?", "??", "*b", "a*", "A", "-x", "a b", "[\\]]", "[a-\\z]", "[z-a]", ".", ""}

var prefixes = []string{"", "", "", "", "", "", "", "", "!", "!", "/", "!/", " ", "  ", "\t", "# ", "#", "\\#", "\\!", " !", "\u00a0", "\u0085", "\ufeff", "\u2028"}
var suffixes = []string{"", "", "", "", "", "", "", "", "/", " ", "\\ ", "\t", "\r", "\u00a0", "\u3000", "//", "/**", "/**/"}

func randPattern(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	if r.IntN(2) == 0 {
		n = 1
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = atoms[r.IntN(len(atoms))]
		if r.IntN(6) == 0 {
			parts[i] += atoms[r.IntN(len(atoms))]
		}
	}
	return prefixes[r.IntN(len(prefixes))] + strings.Join(parts, "/") + suffixes[r.IntN(len(suffixes))]
}

func randContent(r *rand.Rand) string {
	n := r.IntN(6)
	lines := make([]string, n)
	for i := range lines {
		lines[i] = randPattern(r)
	}
	sep := "\n"
	if r.IntN(6) == 0 {
		sep = "\r\n"
	}
	s := strings.Join(lines, sep)
	if r.IntN(2) == 0 {
		s += sep
	}
	if r.IntN(10) == 0 {
		s = "\n\n" + s
	}
	return s
}

func randPath(r *rand.Rand) string {
	n := 1 + r.IntN(4)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = names[r.IntN(len(names))]
	}
	return strings.Join(parts, "/")
}

func run(mfs fstest.MapFS, paths []string) testCase {
	m, err := ignore.NewMatcher(mfs, ".indexignore")
	if err != nil {
		panic(err)
	}
	var tc testCase
	if err := fs.WalkDir(mfs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".indexignore" && !d.IsDir() {
			dir := path.Dir(p)
			if dir == "." {
				dir = ""
			}
			tc.Files = append(tc.Files, ignoreFile{Dir: dir, Content: string(mfs[p].Data)})
		}
		return nil
	}); err != nil {
		panic(err)
	}
	for _, p := range paths {
		tc.Paths = append(tc.Paths, p)
		tc.Ignored = append(tc.Ignored, m.Match(p, false))
	}
	return tc
}

// handCases are fixed trees worth keeping in the vectors whatever the random generator does.
func handCases() []testCase {
	type hc struct {
		files map[string]string
		paths []string
	}
	hcs := []hc{
		{map[string]string{".indexignore": "*\n!*.json\n!*.yaml\n*.clusterserviceversion.yaml\n"},
			[]string{"cockroachdb.json", "etcd.yaml", "etcdoperator.v0.6.1.clusterserviceversion.yaml", "README.md", "unrecognized-schema.json", "deprecations.yaml", "sub/x.json", "sub/README.md"}},
		{map[string]string{".indexignore": "dir/\n!dir/keep.json\n"}, []string{"dir/keep.json", "dir/other.json", "dir", "x/dir/keep.json", "x/dir/a"}},
		{map[string]string{".indexignore": "  *.json\n"}, []string{"a.json", "b/a.json", "a.yaml"}},
		{map[string]string{".indexignore": "*[^é]\n"}, []string{"é", "a", "éé", "x/é"}},
		{map[string]string{".indexignore": "*", "-x/.indexignore": "!keep", "a/.indexignore": "!keep"}, []string{"keep", "a/keep", "-x/keep", "a/b/keep", "a/other"}},
		{map[string]string{"a/.indexignore": "*.json", ".indexignore": "!a/x.json"}, []string{"a/x.json", "a/y.json", "x.json"}},
		{map[string]string{".indexignore": "a/**/b\n**/c\nd/**\n/e\nf/\n**/g/\n"},
			[]string{"a/b", "a/x/b", "a/x/y/b", "x/a/b", "c", "x/c", "x/y/c", "d", "d/x", "d/x/y", "e", "x/e", "f", "f/x", "x/f/y", "g", "g/x", "x/g/y"}},
	}
	var out []testCase
	for _, h := range hcs {
		mfs := fstest.MapFS{}
		for p, c := range h.files {
			mfs[p] = &fstest.MapFile{Data: []byte(c)}
		}
		out = append(out, run(mfs, h.paths))
	}
	return out
}

type fnmatchCase struct {
	Pattern string `json:"pattern"`
	Name    string `json:"name"`
	// Result is "match", "nomatch" or "bad" (filepath.ErrBadPattern).
	Result string `json:"result"`
}

var patChars = []string{"a", "a", "b", "b", "*", "*", "?", "[", "]", "^", "-", "\\", "/", "é", "𝄞", "c", "!"}
var nameChars = []string{"a", "a", "b", "b", "c", "-", "é", "𝄞", "^", "]", "[", "*", "\\", "!", "/"}

func randFrom(r *rand.Rand, alphabet []string, max int) string {
	n := r.IntN(max + 1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// nameLike derives a name that has a fair chance of matching pattern p.
func nameLike(r *rand.Rand, p string) string {
	var b strings.Builder
	for _, c := range p {
		switch c {
		case '*':
			b.WriteString(randFrom(r, nameChars, 2))
		case '?', '[', ']':
			b.WriteString(nameChars[r.IntN(len(nameChars))])
		case '\\':
		default:
			if r.IntN(8) != 0 {
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}

func fnmatchCases(r *rand.Rand) []fnmatchCase {
	var out []fnmatchCase
	for i := 0; i < 5000; i++ {
		c := fnmatchCase{Pattern: randFrom(r, patChars, 7), Name: randFrom(r, nameChars, 5)}
		if i%2 == 1 {
			c.Name = nameLike(r, c.Pattern)
		}
		m, err := filepath.Match(c.Pattern, c.Name)
		switch {
		case err != nil:
			c.Result = "bad"
		case m:
			c.Result = "match"
		default:
			c.Result = "nomatch"
		}
		out = append(out, c)
	}
	return out
}

// tooLongCase: an ignore file "a\n" + N bytes "b" + Tail, and the error NewMatcher returns ("" for none).
type tooLongCase struct {
	N     int    `json:"n"`
	Tail  string `json:"tail"`
	Error string `json:"error"`
}

// tooLongCases probe bufio.Scanner's 64 KiB line limit through ignore.NewMatcher.
func tooLongCases() []tooLongCase {
	var out []tooLongCase
	for _, n := range []int{65534, 65535, 65536} {
		for _, tail := range []string{"", "\n", "\r\n", "\nx"} {
			content := "a\n" + strings.Repeat("b", n) + tail
			_, err := ignore.NewMatcher(fstest.MapFS{".indexignore": &fstest.MapFile{Data: []byte(content)}}, ".indexignore")
			tc := tooLongCase{N: n, Tail: tail}
			if err != nil {
				tc.Error = err.Error()
			}
			out = append(out, tc)
		}
	}
	return out
}

func main() {
	r := rand.New(rand.NewPCG(20240611, 7))
	cases := handCases()
	for i := 0; i < 1000; i++ {
		mfs := fstest.MapFS{}
		nfiles := 1 + r.IntN(3)
		for j := 0; j < nfiles; j++ {
			d := dirNames[r.IntN(len(dirNames))]
			mfs[path.Join(d, ".indexignore")] = &fstest.MapFile{Data: []byte(randContent(r))}
		}
		seen := map[string]bool{}
		var paths []string
		for j := 0; j < 8; j++ {
			p := randPath(r)
			if r.IntN(3) == 0 {
				// put some paths inside the ignore files' directories
				keys := make([]string, 0, len(mfs))
				for k := range mfs {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				if dd := path.Dir(keys[r.IntN(len(keys))]); dd != "." {
					p = dd + "/" + p
				}
			}
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		cases = append(cases, run(mfs, paths))
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{
		"generator": "scripts/oracle/ignore/main.go (github.com/joelanford/ignore v0.1.2, go-git v5.19.1)",
		"cases":     cases,
		"fnmatch":   fnmatchCases(r),
		"tooLong":   tooLongCases(),
	}); err != nil {
		panic(err)
	}
}
