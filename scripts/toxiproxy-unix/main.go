// Command toxiproxy-unix is Toxiproxy's server (github.com/Shopify/toxiproxy/v2, the
// version go.mod pins) with its HTTP API on a unix socket instead of a TCP port, so
// only the user who started it can add toxics to, or disable, the run's proxies.
//
// With -listen instead, the API listens on a TCP port of the loopback interface
// (127.0.0.1:PORT, nothing else is accepted): for a Kubernetes pod, whose loopback
// only the pod's own containers and a port-forward through the API server (with the
// cluster's credentials) reach.
//
// It serves the package's own API handlers (ApiServer's exported methods) on the
// routes the stock server gives them; nothing of Toxiproxy itself is changed. The
// proxies it creates listen on TCP as always: they carry the nodes' traffic.
//
//	toxiproxy-unix -socket DIR/api.sock
//	toxiproxy-unix -listen 127.0.0.1:PORT
//
// DIR must exist, be a directory (not a symlink) owned by this user with mode 0700;
// the socket must not exist yet. The socket is created with mode 0600.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"

	"github.com/Shopify/toxiproxy/v2"
)

func main() {
	socket := flag.String("socket", "", "path of the API's unix socket (in a directory of mode 0700 owned by this user)")
	loopback := flag.String("listen", "", "127.0.0.1:PORT to serve the API on instead of a socket (a pod's loopback)")
	printVersion := flag.Bool("version", false, "print the version")
	flag.Parse()
	if *printVersion {
		fmt.Printf("toxiproxy-unix version %s\n", toxiproxy.Version)
		return
	}
	if (*socket == "") == (*loopback == "") || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: toxiproxy-unix -socket DIR/api.sock | -listen 127.0.0.1:PORT")
		os.Exit(2)
	}
	var listener net.Listener
	var err error
	if *socket != "" {
		listener, err = listen(*socket)
	} else {
		listener, err = listenLoopback(*loopback)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "toxiproxy-unix: %v\n", err)
		os.Exit(1)
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		if *socket != "" {
			os.Remove(*socket)
		}
		os.Exit(0)
	}()

	logger := zerolog.New(os.Stdout).With().Timestamp().Logger()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	logger.Info().Str("socket", *socket).Str("listen", *loopback).Str("version", toxiproxy.Version).Msg("API listening")
	srv := &http.Server{
		Handler:      routes(server, logger),
		WriteTimeout: 30 * time.Second,
		ReadTimeout:  10 * time.Second,
		// An idle keep-alive connection outlives the client's own pool timeout (90 s
		// in the tool's client), so the client never sends a request on a connection
		// the server is closing. Without it the idle timeout is ReadTimeout's 10 s,
		// and a fault lifted 10 s after it began raced that close.
		IdleTimeout: 5 * time.Minute,
	}
	if err := srv.Serve(listener); err != nil {
		logger.Fatal().Err(err).Msg("serving the API failed")
	}
}

// listen checks the socket's directory and creates the socket, readable and writable
// by this user only.
func listen(socket string) (net.Listener, error) {
	dir := filepath.Dir(socket)
	info, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if info.Mode().Perm() != 0o700 {
		return nil, fmt.Errorf("%s has mode %o: it must be 0700", dir, info.Mode().Perm())
	}
	stat, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(stat.Uid) != os.Getuid() {
		return nil, fmt.Errorf("%s is not owned by this user", dir)
	}
	if _, err := os.Lstat(socket); !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s exists already", socket)
	}
	// The socket is created 0600 (not 0777 less the caller's umask), then checked.
	syscall.Umask(0o177)
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(socket, 0o600); err != nil {
		listener.Close()
		return nil, err
	}
	return listener, nil
}

// listenLoopback listens on addr, which must be 127.0.0.1:PORT: the API is never
// served on an address other hosts reach.
func listenLoopback(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host != "127.0.0.1" || port == "" || port == "0" {
		return nil, fmt.Errorf("-listen %s: give 127.0.0.1:PORT (the loopback only, a fixed port)", addr)
	}
	return net.Listen("tcp", addr)
}

// routes gives ApiServer's handlers the paths and methods the stock server gives them.
func routes(server *toxiproxy.ApiServer, logger zerolog.Logger) http.Handler {
	r := mux.NewRouter()
	r.Use(hlog.NewHandler(logger))
	r.Use(func(next http.Handler) http.Handler {
		return http.TimeoutHandler(next, 25*time.Second, "")
	})
	for _, route := range []struct {
		path, method string
		handler      http.HandlerFunc
	}{
		{"/reset", "POST", server.ResetState},
		{"/proxies", "GET", server.ProxyIndex},
		{"/proxies", "POST", server.ProxyCreate},
		{"/populate", "POST", server.Populate},
		{"/proxies/{proxy}", "GET", server.ProxyShow},
		{"/proxies/{proxy}", "POST", server.ProxyUpdate},
		{"/proxies/{proxy}", "DELETE", server.ProxyDelete},
		{"/proxies/{proxy}/toxics", "GET", server.ToxicIndex},
		{"/proxies/{proxy}/toxics", "POST", server.ToxicCreate},
		{"/proxies/{proxy}/toxics/{toxic}", "GET", server.ToxicShow},
		{"/proxies/{proxy}/toxics/{toxic}", "POST", server.ToxicUpdate},
		{"/proxies/{proxy}/toxics/{toxic}", "DELETE", server.ToxicDelete},
		{"/version", "GET", server.Version},
	} {
		r.HandleFunc(route.path, route.handler).Methods(route.method)
	}
	return r
}
