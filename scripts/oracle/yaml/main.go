// Command yaml-oracle answers YAML conversion requests with the real Go libraries that opm uses
// (sigs.k8s.io/yaml v1.6.0 on top of go.yaml.in/yaml/v2 v2.4.4, the same code as gopkg.in/yaml.v2 v2.4.0).
//
// Input: one JSON object per line on stdin:
//
//	{"op":"j2y","in":"<JSON text>"}   -> sigs.k8s.io/yaml.JSONToYAML
//	{"op":"y2j","in":"<YAML text>"}   -> sigs.k8s.io/yaml.YAMLToJSON (error wrapped like yaml.Unmarshal does)
//
// Output: one JSON object per line on stdout: {"out":"..."} or {"err":"..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	sigsyaml "sigs.k8s.io/yaml"
)

type request struct {
	Op string `json:"op"`
	In string `json:"in"`
}

type response struct {
	Out *string `json:"out,omitempty"`
	Err *string `json:"err,omitempty"`
}

func answer(req request) (res response) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprintf("panic: %v", r)
			res = response{Err: &msg}
		}
	}()
	var out []byte
	var err error
	switch req.Op {
	case "j2y":
		out, err = sigsyaml.JSONToYAML([]byte(req.In))
	case "y2j":
		out, err = sigsyaml.YAMLToJSON([]byte(req.In))
		if err != nil {
			err = fmt.Errorf("error converting YAML to JSON: %w", err)
		}
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	if err != nil {
		msg := err.Error()
		return response{Err: &msg}
	}
	s := string(out)
	return response{Out: &s}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<20), 64<<20)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			os.Exit(2)
		}
		if err := enc.Encode(answer(req)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}
