package faults

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// burst opens a WebSocket by hand and writes frames to it in one piece, as
// a client that pipelines requests puts them on the wire, while reading
// every answer as fast as they come. It returns how many frames were
// answered (each answer's id names its frame) and the close status the
// server sent, 0 when it sent none.
func burst(h *herd, header http.Header, frames []string) (answered, closeStatus int, err error) {
	conn, br, err := handshake(h.addr, header)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(60 * time.Second)); err != nil {
		return 0, 0, err
	}
	var wire bytes.Buffer
	for _, f := range frames {
		wire.Write(clientFrame(0x1, []byte(f)))
	}
	written := make(chan error, 1)
	go func() {
		_, err := conn.Write(wire.Bytes())
		written <- err
	}()
	seen := map[string]bool{}
	for len(seen) < len(frames) {
		op, payload, err := readFrame(br)
		if err != nil {
			return len(seen), 0, fmt.Errorf("read after %d answers: %w", len(seen), err)
		}
		switch op {
		case 0x8: // close
			status := 0
			if len(payload) >= 2 {
				status = int(binary.BigEndian.Uint16(payload))
			}
			return len(seen), status, nil
		case 0x1:
			var env envelope
			if json.Unmarshal(payload, &env) == nil && env.ID != "" {
				seen[env.ID] = true
			}
		}
	}
	conn.Write(clientFrame(0x8, []byte{0x03, 0xe8})) // 1000, normal closure
	return len(seen), 0, <-written
}

// handshake performs the WebSocket opening handshake on a new TCP
// connection.
func handshake(addr string, header http.Header) (net.Conn, *bufio.Reader, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/ws", nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", base64.StdEncoding.EncodeToString(key[:]))
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, nil, fmt.Errorf("upgrade answered %s", resp.Status)
	}
	return conn, br, nil
}

// clientFrame is one final frame of opcode op, masked as a client's must
// be.
func clientFrame(op byte, payload []byte) []byte {
	mask := [4]byte{0x5a, 0xc3, 0x17, 0x9e}
	head := []byte{0x80 | op}
	switch n := len(payload); {
	case n < 126:
		head = append(head, 0x80|byte(n))
	case n <= 0xffff:
		head = append(head, 0x80|126)
		head = binary.BigEndian.AppendUint16(head, uint16(n))
	default:
		head = append(head, 0x80|127)
		head = binary.BigEndian.AppendUint64(head, uint64(n))
	}
	out := append(head, mask[:]...)
	for i, b := range payload {
		out = append(out, b^mask[i%4])
	}
	return out
}

// readFrame reads one message from the server (unmasked frames; a
// fragmented message is joined).
func readFrame(br *bufio.Reader) (op byte, payload []byte, err error) {
	for {
		var head [2]byte
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return 0, nil, err
		}
		n := uint64(head[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return 0, nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return 0, nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if n > 64<<20 {
			return 0, nil, fmt.Errorf("frame of %d bytes", n)
		}
		part := make([]byte, n)
		if _, err := io.ReadFull(br, part); err != nil {
			return 0, nil, err
		}
		if code := head[0] & 0x0f; code != 0 {
			op = code
		}
		payload = append(payload, part...)
		if head[0]&0x80 != 0 {
			return op, payload, nil
		}
	}
}
