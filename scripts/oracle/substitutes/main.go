package main

// Substitutes-template oracle: reads cases (template text + bundles answered by image) as JSON on
// stdin and prints, per case, the rendered catalog (JSON stream as opm writes it) or the error text.
import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/template/substitutes"
)

type tcase struct {
	Name     string `json:"name"`
	Template string `json:"template"`
}

type input struct {
	Bundles map[string]json.RawMessage `json:"bundles"`
	Cases   []tcase                    `json:"cases"`
}

type result struct {
	Name   string `json:"name"`
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	cases := in.Cases
	var out []result
	for _, c := range cases {
		c := c
		render := func(_ context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
			raw, ok := in.Bundles[ref]
			if !ok {
				return nil, fmt.Errorf("render reference %q: image not found", ref)
			}
			cfg, err := declcfg.LoadReader(bytes.NewReader(raw))
			if err != nil {
				return nil, err
			}
			return cfg, nil
		}
		f := &substitutes.Factory{}
		t := f.CreateTemplate(render)
		cfg, err := t.Render(context.Background(), strings.NewReader(c.Template))
		r := result{Name: c.Name}
		if err != nil {
			r.Error = err.Error()
		} else {
			var buf bytes.Buffer
			if err := declcfg.WriteJSON(*cfg, &buf); err != nil {
				panic(err)
			}
			r.Output = buf.String()
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
}
