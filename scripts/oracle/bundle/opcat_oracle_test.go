// Oracle for src/bundle/testdata/vectors.json. gen.ts copies this file into package action
// (alpha/action) of operator-registry's source at 4f9d6f22 and runs it with `go test`, so that it
// renders bundle directories with opm's own unexported code path: the `opm render <bundle-dir>`
// path (Render.renderBundleDirectory: registry.NewImageInput, templateBundleImageRef,
// bundleToDeclcfg, then Run's moveBundleObjectsToEndOfPropertySlices and related-image sort),
// with the bundle image reference of a pulled bundle image (`image`) where a case gives one, and the
// template parsed as cmd/opm/render parses --alpha-image-ref-template.
//
// Input (OPCAT_BUNDLE_CASES): a JSON array of {dir, image?, template?}, dir relative to OPCAT_BUNDLE_DIR.
// Output (OPCAT_BUNDLE_OUT): one result per case, property values as their raw JSON text.
package action

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"
	"text/template"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/registry"
)

type opcatCase struct {
	Dir      string `json:"dir"`
	Image    string `json:"image,omitempty"`
	Template string `json:"template,omitempty"`
}

type opcatProperty struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type opcatResult struct {
	Dir           string                 `json:"dir"`
	Image         string                 `json:"image,omitempty"`
	Template      string                 `json:"template,omitempty"`
	Error         string                 `json:"error,omitempty"`
	Name          string                 `json:"name,omitempty"`
	Package       string                 `json:"package,omitempty"`
	BundleImage   string                 `json:"bundleImage"`
	Properties    []opcatProperty        `json:"properties,omitempty"`
	RelatedImages []declcfg.RelatedImage `json:"relatedImages,omitempty"`
}

func opcatRender(c opcatCase) (*declcfg.Bundle, error) {
	r := Render{}
	if c.Template != "" {
		tmpl, err := template.New("image-ref-template").Parse(c.Template)
		if err != nil {
			return nil, fmt.Errorf("invalid image reference template: %v", err)
		}
		r.ImageRefTemplate = tmpl
	}
	img, err := registry.NewImageInput(image.SimpleReference(c.Image), c.Dir)
	if err != nil {
		return nil, err
	}
	if err := r.templateBundleImageRef(img.Bundle); err != nil {
		return nil, fmt.Errorf("failed templating image reference from bundle for %q: %v", c.Dir, err)
	}
	b, err := bundleToDeclcfg(img.Bundle)
	if err != nil {
		return nil, err
	}
	cfg := &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{*b}}
	moveBundleObjectsToEndOfPropertySlices(cfg)
	out := cfg.Bundles[0]
	sort.Slice(out.RelatedImages, func(i, j int) bool { return out.RelatedImages[i].Image < out.RelatedImages[j].Image })
	return &out, nil
}

func TestOpcatBundleVectors(t *testing.T) {
	in, err := os.ReadFile(os.Getenv("OPCAT_BUNDLE_CASES"))
	if err != nil {
		t.Skip("OPCAT_BUNDLE_CASES not set")
	}
	var cases []opcatCase
	if err := json.Unmarshal(in, &cases); err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(os.Getenv("OPCAT_BUNDLE_DIR")); err != nil {
		t.Fatal(err)
	}
	results := make([]opcatResult, 0, len(cases))
	for _, c := range cases {
		res := opcatResult{Dir: c.Dir, Image: c.Image, Template: c.Template}
		b, err := opcatRender(c)
		if err != nil {
			res.Error = err.Error()
		} else {
			res.Name, res.Package, res.BundleImage, res.RelatedImages = b.Name, b.Package, b.Image, b.RelatedImages
			for _, p := range b.Properties {
				res.Properties = append(res.Properties, opcatProperty{Type: p.Type, Value: string(p.Value)})
			}
		}
		results = append(results, res)
	}
	out, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("OPCAT_BUNDLE_OUT"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}
