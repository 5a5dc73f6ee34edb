package gateway

import (
	"context"

	"github.com/herd-dev/herd/shared"
)

// Attention serves the inbox and the push devices; the attention actions
// call it.
type Attention interface {
	// Inbox lists a workspace's open requests, newest first.
	Inbox(ctx context.Context, workspaceID string) (shared.InboxListResponse, error)
	PushConfig(ctx context.Context) (shared.PushConfig, error)
	Subscribe(ctx context.Context, req shared.PushSubscribeRequest) (shared.PushSubscribeResponse, error)
	Devices(ctx context.Context, workspaceID string) ([]shared.PushDevice, error)
	UpdateDevice(ctx context.Context, req shared.PushDeviceUpdateRequest) (shared.PushDevice, error)
	RemoveDevice(ctx context.Context, deviceID string) error
	// TestDevice sends a test notification and returns once the push
	// service took it.
	TestDevice(ctx context.Context, deviceID string) error
}

// attentionActions lists the inbox and push actions, served when an
// Attention is configured.
func (g *Gateway) attentionActions() map[string]action {
	return map[string]action{
		shared.ActionInboxList:        {run: handle(g.inboxList)},
		shared.ActionPushConfigGet:    {run: handle(g.pushConfigGet)},
		shared.ActionPushSubscribe:    {run: handle(g.pushSubscribe)},
		shared.ActionPushDeviceList:   {run: handle(g.pushDeviceList)},
		shared.ActionPushDeviceUpdate: {run: handle(g.pushDeviceUpdate)},
		shared.ActionPushDeviceRemove: {run: handle(g.pushDeviceRemove)},
		shared.ActionPushTest:         {run: handle(g.pushTest)},
	}
}

func (g *Gateway) inboxList(ctx context.Context, _ *conn, req shared.InboxListRequest) (any, error) {
	if err := g.requireWorkspace(ctx, req.WorkspaceID); err != nil {
		return nil, err
	}
	return g.cfg.Attention.Inbox(ctx, req.WorkspaceID)
}

func (g *Gateway) pushConfigGet(ctx context.Context, _ *conn, _ shared.Empty) (any, error) {
	return g.cfg.Attention.PushConfig(ctx)
}

func (g *Gateway) pushSubscribe(ctx context.Context, _ *conn, req shared.PushSubscribeRequest) (any, error) {
	if err := g.requireWorkspace(ctx, req.WorkspaceID); err != nil {
		return nil, err
	}
	return g.cfg.Attention.Subscribe(ctx, req)
}

func (g *Gateway) pushDeviceList(ctx context.Context, _ *conn, req shared.PushDeviceListRequest) (any, error) {
	if err := g.requireWorkspace(ctx, req.WorkspaceID); err != nil {
		return nil, err
	}
	devices, err := g.cfg.Attention.Devices(ctx, req.WorkspaceID)
	if err != nil {
		return nil, err
	}
	return shared.PushDeviceListResponse{Devices: devices}, nil
}

func (g *Gateway) pushDeviceUpdate(ctx context.Context, _ *conn, req shared.PushDeviceUpdateRequest) (any, error) {
	if err := requireID("device_id", req.DeviceID); err != nil {
		return nil, err
	}
	return g.cfg.Attention.UpdateDevice(ctx, req)
}

func (g *Gateway) pushDeviceRemove(ctx context.Context, _ *conn, req shared.PushDeviceRef) (any, error) {
	if err := requireID("device_id", req.DeviceID); err != nil {
		return nil, err
	}
	if err := g.cfg.Attention.RemoveDevice(ctx, req.DeviceID); err != nil {
		return nil, err
	}
	return shared.Empty{}, nil
}

func (g *Gateway) pushTest(ctx context.Context, _ *conn, req shared.PushDeviceRef) (any, error) {
	if err := requireID("device_id", req.DeviceID); err != nil {
		return nil, err
	}
	if err := g.cfg.Attention.TestDevice(ctx, req.DeviceID); err != nil {
		return nil, err
	}
	return shared.Empty{}, nil
}
