// Command sortslice-oracle writes golden vectors for opcat's port of Go's sort.Slice (goSortSlice):
// lists of related images (many sharing an image) sorted exactly as opm sorts a rendered bundle's
// relatedImages, with sort.Slice by image (not stable: equal images come out in pdqsort's order).
// See README.md for how to run it.
package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
)

type relatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// A case: the image (an index into images) of each entry n0, n1, …, and the entry numbers in sorted order.
type vector struct {
	In    []int `json:"in"`
	Order []int `json:"order"`
}

type file struct {
	Images []string `json:"images"`
	Cases  []vector `json:"cases"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sortslice-oracle <out.json>")
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(20261124, 16))
	images := []string{"", "quay.io/a/op@sha256:1", "quay.io/a/op@sha256:2", "registry.redhat.io/x/y:1", "registry.redhat.io/x/y:2", "docker.io/library/busybox", "ghcr.io/o/p:v1.2.3", "quay.io/z/z"}
	out := file{Images: images}
	for i := 0; i < 300; i++ {
		n := 1 + rng.IntN(70)
		pool := 1 + rng.IntN(len(images))
		in := make([]int, n)
		entries := make([]relatedImage, n)
		for j := range in {
			in[j] = rng.IntN(pool)
			entries[j] = relatedImage{Name: fmt.Sprintf("%d", j), Image: images[in[j]]}
		}
		sort.Slice(entries, func(a, b int) bool { return entries[a].Image < entries[b].Image })
		order := make([]int, n)
		for j, e := range entries {
			fmt.Sscanf(e.Name, "%d", &order[j])
		}
		out.Cases = append(out.Cases, vector{In: in, Order: order})
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(os.Args[1], append(b, '\n'), 0o644); err != nil {
		panic(err)
	}
}
