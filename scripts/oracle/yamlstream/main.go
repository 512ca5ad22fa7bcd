package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
)

func main() {
	var cases []struct {
		Input string `json:"input"`
		Size  int    `json:"size"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	type item struct {
		Value json.RawMessage `json:"value,omitempty"`
		Error string          `json:"error,omitempty"`
	}
	out := []map[string]interface{}{}
	for _, c := range cases {
		dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(c.Input), c.Size)
		items := []item{}
		for i := 0; i < 20; i++ {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if err == io.EOF {
				break
			}
			if err != nil {
				items = append(items, item{Error: err.Error()})
				break
			}
			if raw == nil {
				raw = json.RawMessage(`"<empty>"`)
			}
			items = append(items, item{Value: raw})
		}
		out = append(out, map[string]interface{}{"input": c.Input, "size": c.Size, "items": items})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(b))
}
