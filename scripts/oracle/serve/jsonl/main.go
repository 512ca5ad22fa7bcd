// What catalogd's storage writes as a catalog's all.json (catalog.jsonl): every blob of the catalog
// directory in declcfg.WalkMetasFS order, each as its Meta.Blob (keys sorted, compact, no HTML
// escaping, newline-terminated). gen.ts places this file in operator-registry's source tree at
// 4f9d6f22 (so that it builds against opm's own declcfg) and runs it on src/serve/testdata/catalog.
package main

import (
	"context"
	"os"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

func main() {
	err := declcfg.WalkMetasFS(context.Background(), os.DirFS(os.Args[1]), func(_ string, meta *declcfg.Meta, err error) error {
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(meta.Blob)
		return err
	})
	if err != nil {
		panic(err)
	}
}
