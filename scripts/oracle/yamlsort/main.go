// Command yamlsort answers, for key sets read as JSON from stdin ([][]string), the order in which
// go-yaml v2 (go.yaml.in/yaml/v2 v2.4.4, as operator-registry uses it through sigs.k8s.io/yaml) writes the
// keys of a map[string]interface{}: its keyList.Less, which uses Go's unicode.IsLetter / unicode.IsDigit.
// Output: the sorted key sets as JSON, one per line.
package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v2"
)

func main() {
	var sets [][]string
	if err := json.NewDecoder(os.Stdin).Decode(&sets); err != nil {
		panic(err)
	}
	os.Stdout.WriteString("[\n")
	for n, keys := range sets {
		m := map[string]int{}
		for i, k := range keys {
			m[k] = i
		}
		out, err := yaml.Marshal(m)
		if err != nil {
			panic(err)
		}
		var sorted []string
		for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			i, err := strconv.Atoi(line[strings.LastIndex(line, ": ")+2:])
			if err != nil {
				panic(line)
			}
			sorted = append(sorted, keys[i])
		}
		b, _ := json.Marshal(sorted)
		os.Stdout.Write(b)
		if n < len(sets)-1 {
			os.Stdout.WriteString(",")
		}
		os.Stdout.WriteString("\n")
	}
	os.Stdout.WriteString("]\n")
}
