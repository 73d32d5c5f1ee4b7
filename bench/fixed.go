package bench

import (
	"context"
	"net"

	"github.com/valyala/fasthttp"
)

// ServeFixed is the baselines' bare fasthttp server: every request gets status 200, contentType
// and body, with fasthttp's default settings (its Server and Date headers). It serves on addr
// until ctx ends. `vitrine bench-fixed-server` runs it as a child process.
func ServeFixed(ctx context.Context, addr, contentType string, body []byte) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
		c.SetContentType(contentType)
		c.SetBody(body)
	}}
	go func() {
		<-ctx.Done()
		srv.Shutdown()
	}()
	return srv.Serve(ln)
}
