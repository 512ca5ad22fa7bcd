// Command reference-oracle writes golden vectors for src/image/reference.ts: image references parsed by
// go.podman.io/image/v5/docker/reference (the package opm's validateImagePullSpec uses) with
// ParseNormalizedNamed, Parse and ParseNamed. Inputs: every string literal of the upstream
// reference tests (podman image v5.41.1 and github.com/distribution/reference v0.6.0, read from the
// module cache), hand-picked cases, and random grammar-based strings with mutations.
//
// Regenerate (needs Go and the module proxy; outside the repository):
//
//	mkdir -p /tmp/ref && cp scripts/oracle/reference/main.go /tmp/ref/ && cd /tmp/ref && go mod init oracle/reference &&
//	go get go.podman.io/image/v5@v5.41.1 github.com/distribution/reference@v0.6.0 && go mod tidy &&
//	go run . > "$OLDPWD/src/image/testdata/reference-vectors.json"
package main

import (
	_ "crypto/sha256" // digest algorithms must be linked in, as they are in opm
	_ "crypto/sha512"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	_ "github.com/distribution/reference" // only its test sources are read
	"go.podman.io/image/v5/docker/reference"
)

type parsed struct {
	String   string `json:"string"`
	Familiar string `json:"familiar"`
	Domain   string `json:"domain"`
	Path     string `json:"path"`
	Tag      string `json:"tag,omitempty"`
	Digest   string `json:"digest,omitempty"`
}

type vector struct {
	In string `json:"in"`
	// Normalized is ParseNormalizedNamed's result, NormalizedErr its error text.
	Normalized    *parsed `json:"normalized,omitempty"`
	NormalizedErr string  `json:"normalizedErr,omitempty"`
	// Parsed is Parse's result (always a Named here), ParsedErr its error text.
	Parsed    *parsed `json:"parsed,omitempty"`
	ParsedErr string  `json:"parsedErr,omitempty"`
	// NamedErr is ParseNamed's error text ("" when it succeeds).
	NamedErr string `json:"namedErr,omitempty"`
}

func describe(r reference.Reference) *parsed {
	n, ok := r.(reference.Named)
	if !ok {
		panic("not named: " + r.String())
	}
	p := &parsed{String: r.String(), Familiar: reference.FamiliarString(r), Domain: reference.Domain(n), Path: reference.Path(n)}
	if t, ok := r.(reference.Tagged); ok {
		p.Tag = t.Tag()
	}
	if d, ok := r.(reference.Digested); ok {
		p.Digest = d.Digest().String()
	}
	return p
}

func eval(s string) vector {
	v := vector{In: s}
	if r, err := reference.ParseNormalizedNamed(s); err != nil {
		v.NormalizedErr = err.Error()
	} else {
		v.Normalized = describe(r)
	}
	if r, err := reference.Parse(s); err != nil {
		v.ParsedErr = err.Error()
	} else {
		v.Parsed = describe(r)
	}
	if _, err := reference.ParseNamed(s); err != nil {
		v.NamedErr = err.Error()
	}
	return v
}

func moduleDir(mod string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(out))
}

// upstreamLiterals returns every string literal of the upstream reference tests.
func upstreamLiterals() []string {
	dirs := []string{
		filepath.Join(moduleDir("go.podman.io/image/v5"), "docker", "reference"),
		moduleDir("github.com/distribution/reference"),
	}
	var out []string
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				panic(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
					if s, err := strconv.Unquote(bl.Value); err == nil && len(s) < 400 {
						out = append(out, s)
					}
				}
				return true
			})
		}
	}
	return out
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var hand = []string{
	"", ":", "@", "/", "a", "A", "a/", "/a", "a//b", "a:", "a@", "a:b@", "a@sha256:",
	"quay.io/operator-framework/foo-bundle@ssha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234",
	"quay.io/operator-framework/foo-bundle@md5:abcd1234abcd1234abcd1234abcd1234",
	"quay.io/operator-framework/my-operator@ssha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234",
	"quay.io/operator-framework/foo-bundle:v0.1.0",
	"quay.io/operator-framework/foo-bundle@sha256:" + hex64,
	"quay.io/operator-framework/foo-bundle:v1@sha256:" + hex64,
	"foo@sha256:" + hex64, "foo@SHA256:" + hex64, "foo@sha256:" + strings.ToUpper(hex64),
	"foo@sha256:" + hex64[:63], "foo@sha256:" + hex64 + "0", "foo@sha384:" + hex64 + hex64[:32],
	"foo@sha512:" + hex64 + hex64, "foo@sha512:" + hex64, "foo@sha256+b64:" + hex64, "foo@a.b-c_d+e:" + hex64[:32],
	"foo@Sha256:" + hex64, "foo@sha256:" + hex64[:31], "foo@sha256:" + hex64[:32],
	hex64, hex64[:63], hex64 + "a", "docker.io/" + hex64, "library/" + hex64, hex64 + ":tag",
	"localhost/foo", "localhost:5000/foo", "LOCALHOST/foo", "Localhost/Foo", "localhost", "localhost:5000",
	"index.docker.io/foo", "index.docker.io/library/foo", "docker.io/foo", "docker.io/library/foo/bar",
	"docker.io", "docker.io/", "library/foo", "foo/bar", "foo/bar/baz", "Foo.com/bar", "foo.com/Bar",
	"foo:Bar", "foo:bar/Baz", "foo/bar:tag/Baz", "Foo", "foo/Bar", "fOO:tag", "foo:TAG",
	"foo:İ", "foo:K", "fooİ", "foo:é", "é", "foo/é", "[::1]:5000/foo", "192.168.0.1:8080/foo/bar:1.0",
	"a-.com/foo", "-a.com/foo", "a.com-/foo", "a..com/foo", "a.com:/foo", "a.com:65536/foo", "a.com:x/foo",
	"foo_bar", "foo__bar", "foo___bar", "foo-bar", "foo--bar", "foo.bar", "foo..bar", "_foo", "foo_", "foo-",
	"foo:-tag", "foo:.tag", "foo:_tag", "foo:" + strings.Repeat("a", 128), "foo:" + strings.Repeat("a", 129),
	strings.Repeat("a", 237), strings.Repeat("a", 238), "a.com/" + strings.Repeat("a", 249), "a.com/" + strings.Repeat("a", 250),
	strings.Repeat("a/", 100) + "a", "docker.io/library/" + strings.Repeat("a", 237), "a b", "a\tb", "a\n", " a",
	"https://quay.io/foo", "quay.io/foo:tag:tag", "quay.io/foo@sha256:" + hex64 + "@sha256:" + hex64,
}

var (
	domains    = []string{"", "", "", "docker.io/", "index.docker.io/", "localhost/", "localhost:5000/", "quay.io/", "registry.example.com:443/", "Foo.com/", "a-b.c/", "127.0.0.1:5000/", "-x.com/", "a..b/", "host:port/", "x/", "LOCALHOST/", "a_b.com/"}
	components = []string{"library", "foo", "bar", "operator", "a", "0", "library", "foo", "bar", "my-operator", "x.y", "x_y", "9", "Foo", "a_b", "a__b", "a___b", "a-b", "a--b", "a.b", "a..b", "_a", "a_", "-a", "a-", "", "fooİ", "é", "a:b", "a@b", hex64}
	tags       = []string{"", "", "latest", "v1.0.0", "V1", "_x", "-x", ".x", "x.y-z_w", strings.Repeat("t", 128), strings.Repeat("t", 129), "İ", "a/b"}
	digests    = []string{"", "", "", "sha256:" + hex64, "sha256:" + hex64[:63], "sha256:" + strings.ToUpper(hex64), "sha384:" + hex64 + hex64[:32], "sha512:" + hex64 + hex64, "ssha256:" + hex64, "md5:" + hex64[:32], "SHA256:" + hex64, "sha256:" + hex64[:31], "a+b:" + hex64[:32], "a-_b:" + hex64[:32], "sha256:" + hex64 + "g", "1sha:" + hex64}
	noise      = []string{"A", "/", ":", "@", ".", "-", "_", "__", " ", "é", "İ", "K", "0", "a", "sha256:", "//"}
)

func random(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString(domains[r.IntN(len(domains))])
	n := 1 + r.IntN(3)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("/")
		}
		b.WriteString(components[r.IntN(len(components))])
	}
	if t := tags[r.IntN(len(tags))]; t != "" {
		b.WriteString(":" + t)
	}
	if d := digests[r.IntN(len(digests))]; d != "" {
		b.WriteString("@" + d)
	}
	s := b.String()
	// Mutate sometimes: insert, delete or replace one piece.
	switch r.IntN(8) {
	case 0:
		i := r.IntN(len(s) + 1)
		s = s[:i] + noise[r.IntN(len(noise))] + s[i:]
	case 1:
		if len(s) > 0 {
			i := r.IntN(len(s))
			s = s[:i] + s[i+1:]
		}
	case 2:
		if r.IntN(3) != 0 {
			break
		}
		s = strings.ToUpper(s[:len(s)/2]) + s[len(s)/2:]
	}
	return strings.ToValidUTF8(s, "?")
}

func main() {
	seen := map[string]bool{}
	var inputs []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			inputs = append(inputs, s)
		}
	}
	lits := upstreamLiterals()
	sort.Strings(lits)
	for _, s := range lits {
		add(s)
	}
	for _, s := range hand {
		add(s)
	}
	r := rand.New(rand.NewPCG(3, 1415926))
	for len(inputs) < 4000 {
		add(random(r))
	}
	vs := make([]vector, 0, len(inputs))
	for _, s := range inputs {
		vs = append(vs, eval(s))
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{
		"generator": "scripts/oracle/reference/main.go (go.podman.io/image/v5 v5.41.1 docker/reference, go-digest v1.0.0)",
		"vectors":   vs,
	}); err != nil {
		panic(err)
	}
}
