// Command standin-kubelet is a stand-in for the kubelet's device-plugin manager, enough to drive
// a real device plugin without a kubelet: it serves the Registration service on the kubelet
// socket and, for each plugin that registers, calls GetDevicePluginOptions, follows ListAndWatch,
// and (after -wait) asks GetPreferredAllocation for -size devices of the healthy ones and
// Allocate for its answer. Every step is one JSON line on stdout:
//
//	{"event":"register","resource":"nvidia.com/gpu","endpoint":"nvidia-gpu.sock","preferred":true}
//	{"event":"devices","resource":"nvidia.com/gpu","devices":[{"id":"GPU-...","health":"Healthy"}]}
//	{"event":"preferred","resource":"nvidia.com/gpu","ids":["GPU-..."],"error":"","seconds":0.01}
//	{"event":"allocate","resource":"nvidia.com/gpu","envs":{...},"device_paths":[...],"error":""}
//
// It exits after -duration (or on SIGTERM/SIGINT). Part of the real-client suite
// (tests/clients/run.py; docs/real-clients.md).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	api "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

var (
	dir      = flag.String("dir", api.DevicePluginPath, "device-plugin folder (kubelet.sock is served there)")
	duration = flag.Duration("duration", 30*time.Second, "how long to run")
	wait     = flag.Duration("wait", 2*time.Second, "delay between the first device list and GetPreferredAllocation")
	size     = flag.Int("size", 2, "allocation size asked for (fewer when fewer devices are healthy)")
	prefWait = flag.Duration("preferred-timeout", 10*time.Second, "how long to wait for GetPreferredAllocation "+
		"(then Allocate gets the first devices of the list, as a kubelet does without a preference)")
	outMu sync.Mutex
)

func emit(v map[string]any) {
	outMu.Lock()
	defer outMu.Unlock()
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

type registration struct {
	api.UnimplementedRegistrationServer
	ctx context.Context
}

func (s *registration) Register(_ context.Context, req *api.RegisterRequest) (*api.Empty, error) {
	preferred := req.Options != nil && req.Options.GetPreferredAllocationAvailable
	emit(map[string]any{"event": "register", "resource": req.ResourceName, "endpoint": req.Endpoint,
		"version": req.Version, "preferred": preferred})
	go follow(s.ctx, req.ResourceName, filepath.Join(*dir, req.Endpoint))
	return &api.Empty{}, nil
}

func fail(resource, event string, err error) {
	emit(map[string]any{"event": event, "resource": resource, "error": err.Error()})
}

// follow talks to one plugin until the context ends.
func follow(ctx context.Context, resource, socket string) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail(resource, "dial", err)
		return
	}
	defer conn.Close()
	client := api.NewDevicePluginClient(conn)
	if _, err := client.GetDevicePluginOptions(ctx, &api.Empty{}); err != nil {
		fail(resource, "options", err)
		return
	}
	stream, err := client.ListAndWatch(ctx, &api.Empty{})
	if err != nil {
		fail(resource, "devices", err)
		return
	}
	first := true
	for {
		resp, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				fail(resource, "devices", err)
			}
			return
		}
		devs := []map[string]string{}
		healthy := []string{}
		for _, d := range resp.Devices {
			devs = append(devs, map[string]string{"id": d.ID, "health": d.Health})
			if d.Health == api.Healthy {
				healthy = append(healthy, d.ID)
			}
		}
		emit(map[string]any{"event": "devices", "resource": resource, "devices": devs})
		if first {
			first = false
			sort.Strings(healthy)
			go allocate(ctx, client, resource, healthy)
		}
	}
}

func allocate(ctx context.Context, client api.DevicePluginClient, resource string, healthy []string) {
	select {
	case <-time.After(*wait):
	case <-ctx.Done():
		return
	}
	n := *size
	if n > len(healthy) {
		n = len(healthy)
	}
	if n == 0 {
		return
	}
	pctx, pcancel := context.WithTimeout(ctx, *prefWait)
	defer pcancel()
	start := time.Now()
	pref, err := client.GetPreferredAllocation(pctx, &api.PreferredAllocationRequest{ContainerRequests: []*api.ContainerPreferredAllocationRequest{
		{AvailableDeviceIDs: healthy, AllocationSize: int32(n)}}})
	ids := healthy[:n]
	if err != nil {
		emit(map[string]any{"event": "preferred", "resource": resource, "size": n, "error": err.Error(),
			"seconds": time.Since(start).Seconds()})
	} else {
		ids = pref.ContainerResponses[0].DeviceIDs
		emit(map[string]any{"event": "preferred", "resource": resource, "ids": ids, "size": n, "error": "",
			"seconds": time.Since(start).Seconds()})
	}
	resp, err := client.Allocate(ctx, &api.AllocateRequest{ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIDs: ids}}})
	if err != nil {
		fail(resource, "allocate", err)
		return
	}
	c := resp.ContainerResponses[0]
	paths := []string{}
	for _, d := range c.Devices {
		paths = append(paths, d.HostPath)
	}
	emit(map[string]any{"event": "allocate", "resource": resource, "ids": ids, "envs": c.Envs,
		"device_paths": paths, "cdi": len(c.CDIDevices), "error": ""})
}

func main() {
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, *duration)
	defer cancel2()
	sock := filepath.Join(*dir, "kubelet.sock")
	_ = os.MkdirAll(*dir, 0o755)
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		fail("", "listen", err)
		os.Exit(1)
	}
	srv := grpc.NewServer()
	api.RegisterRegistrationServer(srv, &registration{ctx: ctx})
	go func() { _ = srv.Serve(l) }()
	emit(map[string]any{"event": "listening", "socket": sock})
	<-ctx.Done()
	srv.Stop()
}
