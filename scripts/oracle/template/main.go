// Oracle for opcat's template tests: runs operator-registry's own template code (alpha/template) on
// the cases of cases.json and prints, for each, the error text or the rendered catalog as opm writes it.
//
// Bundle images are answered from a small FBC (cases.json `bundles`, or a case's own) (loaded with declcfg.LoadReader,
// matched by exact image string), standing in for image pulls, as opcat's reuseSource does.
//
// Regenerate (outside the repository, needs Go and the module proxy):
//
//	mkdir /tmp/oracle && cp main.go /tmp/oracle && cd /tmp/oracle && go mod init oracle   (run from scripts/oracle/template; paths below are relative to src/template/testdata)
//	# require github.com/operator-framework/operator-registry (replace it with a checkout of the wanted commit)
//	go build -o oracle . && node gen-cases.mjs ../../../src/template/testdata/cases.json && ./oracle < ../../../src/template/testdata/cases.json > ../../../src/template/testdata/vectors.json
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/template"
)

type testCase struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"`
	Input   string `json:"input"`
	Bundles string `json:"bundles,omitempty"`
}

type result struct {
	Name string `json:"name"`
	Out  string `json:"out,omitempty"`
	Err  string `json:"err,omitempty"`
}

func renderer(fbc string) (template.BundleRenderer, error) {
	byImage := map[string]declcfg.Bundle{}
	if fbc != "" {
		cfg, err := declcfg.LoadReader(strings.NewReader(fbc))
		if err != nil {
			return nil, err
		}
		for _, b := range cfg.Bundles {
			if _, ok := byImage[b.Image]; !ok {
				byImage[b.Image] = b
			}
		}
	}
	return func(_ context.Context, image string) (*declcfg.DeclarativeConfig, error) {
		b, ok := byImage[image]
		if !ok {
			return nil, fmt.Errorf("render reference %q: image not found in the reused catalog", image)
		}
		return &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{b}}, nil
	}, nil
}

func run(c testCase) (string, error) {
	rb, err := renderer(c.Bundles)
	if err != nil {
		return "", fmt.Errorf("oracle fixture: %v", err)
	}
	reg := template.NewRegistry()
	var tmpl template.Template
	var r io.Reader = strings.NewReader(c.Input)
	if c.Type != "" {
		if !reg.HasType(c.Type) {
			return "", fmt.Errorf("invalid template type %q, must be one of: %s", c.Type, reg.GetSupportedTypes())
		}
		tmpl, err = reg.CreateTemplateByType(c.Type, rb)
		if err != nil {
			return "", fmt.Errorf("creating template by type: %v", err)
		}
	} else {
		tmpl, r, err = reg.CreateTemplateBySchema(r, rb)
		if err != nil {
			return "", fmt.Errorf("auto-detecting template type: %v", err)
		}
	}
	cfg, err := tmpl.Render(context.Background(), r)
	if err != nil {
		return "", fmt.Errorf("rendering template: %v", err)
	}
	var buf bytes.Buffer
	if err := declcfg.WriteJSON(*cfg, &buf); err != nil {
		return "", fmt.Errorf("writing output: %v", err)
	}
	return buf.String(), nil
}

func main() {
	var in struct {
		Bundles string     `json:"bundles"`
		Cases   []testCase `json:"cases"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	out := make([]result, 0, len(in.Cases))
	for _, c := range in.Cases {
		if c.Bundles == "" {
			c.Bundles = in.Bundles
		}
		s, err := run(c)
		r := result{Name: c.Name, Out: s}
		if err != nil {
			r.Err = err.Error()
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
