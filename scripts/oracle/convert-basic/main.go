// Oracle for `opm alpha convert-template basic`: the converter's logic (declcfg.WalkMetasReader,
// Meta.UnmarshalJSON, basic.FromReader, converter.Convert) written against the same libraries.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

type Meta struct {
	Schema string
	Blob   json.RawMessage
}

func (m Meta) MarshalJSON() ([]byte, error) { return m.Blob, nil }

func (m *Meta) UnmarshalJSON(blob []byte) error {
	blobMap := map[string]interface{}{}
	if err := json.Unmarshal(blob, &blobMap); err != nil {
		return err
	}
	if s, ok := blobMap["schema"].(string); ok {
		m.Schema = s
	}
	buf := bytes.Buffer{}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(blobMap); err != nil {
		return err
	}
	m.Blob = buf.Bytes()
	return nil
}

type Bundle struct {
	Schema        string            `json:"schema"`
	Name          string            `json:"name,omitempty"`
	Package       string            `json:"package,omitempty"`
	Image         string            `json:"image"`
	Properties    []json.RawMessage `json:"properties,omitempty"`
	RelatedImages []json.RawMessage `json:"relatedImages,omitempty"`
}

type BasicTemplateData struct {
	Schema  string  `json:"schema"`
	Entries []*Meta `json:"entries"`
}

func main() {
	dec := yaml.NewYAMLOrJSONDecoder(os.Stdin, 4096)
	var entries []*Meta
	for {
		var in Meta
		if err := dec.Decode(&in); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			panic(err)
		}
		if in.Schema == "olm.bundle" {
			var b Bundle
			if err := json.Unmarshal(in.Blob, &b); err != nil {
				panic(err)
			}
			blob, _ := json.Marshal(Bundle{Schema: b.Schema, Image: b.Image})
			in.Blob = blob
		}
		m := in
		entries = append(entries, &m)
	}
	b, err := json.MarshalIndent(&BasicTemplateData{Schema: "olm.template.basic", Entries: entries}, "", "    ")
	if err != nil {
		panic(err)
	}
	if len(os.Args) > 1 && os.Args[1] == "yaml" {
		y, err := sigsyaml.JSONToYAML(b)
		if err != nil {
			panic(err)
		}
		y = append([]byte("---\n"), y...)
		fmt.Fprintln(os.Stdout, string(y))
		return
	}
	fmt.Fprintln(os.Stdout, string(b))
}
