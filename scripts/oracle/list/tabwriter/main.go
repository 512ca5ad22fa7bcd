// Go's text/tabwriter configured as opm's list actions configure it (alpha/action/list.go:
// tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)): reads a JSON array of inputs on stdin, writes the
// JSON array of what the writer prints for each (written in one Write, then Flush).
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"text/tabwriter"
)

func main() {
	var inputs []string
	if err := json.NewDecoder(os.Stdin).Decode(&inputs); err != nil {
		panic(err)
	}
	outputs := make([]string, 0, len(inputs))
	for _, in := range inputs {
		var b bytes.Buffer
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		if _, err := tw.Write([]byte(in)); err != nil {
			panic(err)
		}
		if err := tw.Flush(); err != nil {
			panic(err)
		}
		outputs = append(outputs, b.String())
	}
	if err := json.NewEncoder(os.Stdout).Encode(outputs); err != nil {
		panic(err)
	}
}
