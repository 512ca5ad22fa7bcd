package main

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	var cases []string
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := []map[string]string{}
	for _, c := range cases {
		var v interface{}
		err := yaml.UnmarshalStrict([]byte(c), &v)
		r := map[string]string{"input": c}
		if err != nil {
			r["error"] = err.Error()
		} else {
			b, _ := json.Marshal(v)
			r["value"] = string(b)
		}
		out = append(out, r)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(b))
}
