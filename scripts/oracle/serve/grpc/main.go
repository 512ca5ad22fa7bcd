// Regenerates src/serve/testdata/grpc-golden.json from the real opm: starts `opm serve` on
// src/serve/testdata/catalog, sends every request of src/serve/testdata/requests.json with grpcurl
// (-emit-defaults, -format-error, the request's metadata as -H headers) and writes, per request, the
// responses (protojson decoded and re-encoded by encoding/json: keys sorted, HTML escaped) and the
// error (gRPC code and message). Streams opm sends in Go map order are sorted (see unordered).
//
//	go run ./scripts/oracle/serve/grpc [-check] [-opm PATH] [-grpcurl PATH]
//
// from the repository root (stdlib only; grpcurl: go install github.com/fullstorydev/grpcurl/cmd/grpcurl@latest).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Streams whose order opm does not define (it ranges over Go maps): their responses are sorted by
// their JSON encoding so that the golden file is reproducible; the tests compare them as sets
// (UNORDERED in test/serve/helpers.ts).
var unordered = map[string]bool{
	"ListPackages":                       true,
	"GetChannelEntriesThatReplace":       true,
	"GetChannelEntriesThatProvide":       true,
	"GetLatestChannelEntriesThatProvide": true,
}

type request struct {
	RPC string            `json:"rpc"`
	Req json.RawMessage   `json:"req"`
	Md  map[string]string `json:"md,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type call struct {
	RPC       string            `json:"rpc"`
	Req       json.RawMessage   `json:"req"`
	Md        map[string]string `json:"md,omitempty"`
	Responses []interface{}     `json:"responses"`
	Error     *rpcError         `json:"error,omitempty"`
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func main() {
	home, _ := os.UserHomeDir()
	opm := flag.String("opm", filepath.Join(home, ".cache", "opcat", "opm", "opm"), "opm binary")
	grpcurl := flag.String("grpcurl", "grpcurl", "grpcurl binary")
	check := flag.Bool("check", false, "compare with the committed file instead of writing it")
	flag.Parse()
	const dir = "src/serve/testdata"
	out := filepath.Join(dir, "grpc-golden.json")

	in, err := os.ReadFile(filepath.Join(dir, "requests.json"))
	if err != nil {
		panic(err)
	}
	var reqs []request
	if err := json.Unmarshal(in, &reqs); err != nil {
		panic(err)
	}

	port := freePort()
	serve := exec.Command(*opm, "serve", filepath.Join(dir, "catalog"), "--port", port, "--pprof-addr", "127.0.0.1:"+freePort(), "--termination-log", os.DevNull)
	logs, err := serve.StderrPipe()
	if err != nil {
		panic(err)
	}
	if err := serve.Start(); err != nil {
		panic(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	// Ready when opm logs that it serves (logrus: msg="serving registry").
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "serving registry") {
				ready <- nil
				_, _ = io.Copy(io.Discard, logs)
				return
			}
		}
		ready <- errors.New("opm serve exited before serving")
	}()
	select {
	case err := <-ready:
		if err != nil {
			panic(err)
		}
	case <-time.After(60 * time.Second):
		panic("opm serve did not start within 60 s")
	}

	calls := make([]call, 0, len(reqs))
	for _, r := range reqs {
		service := "api.Registry"
		if strings.HasPrefix(r.RPC, "Experimental") {
			service = "api.ExperimentalRegistry"
		}
		args := []string{"-plaintext", "-emit-defaults", "-format-error", "-d", string(r.Req)}
		for k, v := range r.Md {
			args = append(args, "-H", k+": "+v)
		}
		args = append(args, "127.0.0.1:"+port, service+"/"+r.RPC)
		cmd := exec.Command(*grpcurl, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr := cmd.Run()
		c := call{RPC: r.RPC, Req: r.Req, Md: r.Md, Responses: []interface{}{}}
		dec := json.NewDecoder(&stdout)
		for {
			var v interface{}
			if err := dec.Decode(&v); err == io.EOF {
				break
			} else if err != nil {
				panic(fmt.Sprintf("%s %s: %v", r.RPC, r.Req, err))
			}
			c.Responses = append(c.Responses, v)
		}
		if runErr != nil {
			// -format-error: the status as JSON on stderr.
			var e rpcError
			if err := json.Unmarshal(stderr.Bytes(), &e); err != nil {
				panic(fmt.Sprintf("%s %s: %v: %s", r.RPC, r.Req, runErr, stderr.String()))
			}
			c.Error = &e
		}
		if unordered[r.RPC] {
			sort.Slice(c.Responses, func(i, j int) bool {
				a, _ := json.Marshal(c.Responses[i])
				b, _ := json.Marshal(c.Responses[j])
				return bytes.Compare(a, b) < 0
			})
		}
		calls = append(calls, c)
	}
	b, err := json.MarshalIndent(calls, "", " ")
	if err != nil {
		panic(err)
	}
	b = append(b, '\n')
	if *check {
		have, _ := os.ReadFile(out)
		if !bytes.Equal(have, b) {
			fmt.Printf("%s: DIFFERS (committed %d bytes, opm gives %d)\n", out, len(have), len(b))
			os.Exit(1)
		}
		fmt.Printf("%s: identical (%d bytes)\n", out, len(b))
		return
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		panic(err)
	}
	fmt.Printf("%s: written (%d bytes)\n", out, len(b))
}
