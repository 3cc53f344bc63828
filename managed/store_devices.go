package managed

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

const deviceColumns = `device_id, serial, platform, api_level, capabilities_json, labels_json, health,
	last_seen_ms, generation, lease_id, lease_task_id, lease_shard_id, lease_expires_ms,
	consecutive_failures, circuit_open_until_ms`

// deviceRow is a device as stored, with the lease fields a fence compares.
type deviceRow struct {
	Device
	leaseID, leaseTaskID, leaseShardID sql.NullString
}

func scanDevice(r row) (*deviceRow, error) {
	var d deviceRow
	var caps, labels string
	var apiLevel int64
	var expires sql.NullInt64
	err := r.Scan(&d.DeviceID, &d.Serial, &d.Platform, &apiLevel, &caps, &labels, &d.Health,
		&d.LastSeenAt, &d.OwnerGeneration, &d.leaseID, &d.leaseTaskID, &d.leaseShardID, &expires,
		&d.ConsecutiveFailures, &d.CircuitOpenUntil)
	if err != nil {
		return nil, err
	}
	d.SchemaVersion = DeviceSchema
	d.APILevel = int(apiLevel)
	d.Leased = d.leaseID.Valid
	if expires.Valid {
		d.LeaseExpiresAt = &expires.Int64
	}
	if err := json.Unmarshal([]byte(caps), &d.Capabilities); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(labels), &d.Labels); err != nil {
		return nil, err
	}
	return &d, nil
}

func (s *store) RegisterDevice(ctx context.Context, spec DeviceSpec) (Device, error) {
	d, err := normalizeDevice(spec)
	if err != nil {
		return Device{}, err
	}
	capsJSON, _ := canonjson.Marshal(d.Capabilities)
	labelsJSON, _ := canonjson.Marshal(d.Labels)
	now, err := s.now(ctx)
	if err != nil {
		return Device{}, err
	}
	err = s.write(ctx, func(t txn) error {
		var owner string
		switch err := t.queryRow(ctx, `SELECT device_id FROM managed_devices WHERE serial = $1`, d.Serial).Scan(&owner); {
		case err == nil && owner != d.DeviceID:
			return storeError(fault.CodeSerialConflict, "this adb serial is registered to another device id").With("deviceId", owner)
		case err != nil && !errors.Is(err, errNoRows):
			return err
		}
		n, err := t.exec(ctx, `UPDATE managed_devices SET serial = $1, platform = $2, api_level = $3,
			capabilities_json = $4, labels_json = $5, health = $6, last_seen_ms = $7, updated_at_ms = $7
			WHERE device_id = $8`,
			d.Serial, d.Platform, d.APILevel, string(capsJSON), string(labelsJSON), d.Health, now, d.DeviceID)
		if err != nil || n == 1 {
			return s.uniqueAsConflict(err)
		}
		_, err = t.exec(ctx, `INSERT INTO managed_devices (device_id, serial, platform, api_level,
			capabilities_json, labels_json, health, last_seen_ms, created_at_ms, updated_at_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $8)`,
			d.DeviceID, d.Serial, d.Platform, d.APILevel, string(capsJSON), string(labelsJSON), d.Health, now)
		return s.uniqueAsConflict(err)
	})
	if err != nil {
		return Device{}, err
	}
	return s.Device(ctx, d.DeviceID)
}

// uniqueAsConflict reports a concurrent registration of the same serial.
func (s *store) uniqueAsConflict(err error) error {
	if err != nil && s.be.uniqueViolation(err) {
		return storeError(fault.CodeSerialConflict, "this adb serial or device id was registered concurrently")
	}
	return err
}

func (s *store) SetDeviceHealth(ctx context.Context, deviceID, health string) (Device, error) {
	id, err := identifier(deviceID, "device id")
	if err != nil {
		return Device{}, err
	}
	if !validHealth(health) {
		return Device{}, storeError(fault.CodeInvalidHealth, "device health must be healthy, degraded, offline or quarantined").With("health", health)
	}
	now, err := s.now(ctx)
	if err != nil {
		return Device{}, err
	}
	err = s.write(ctx, func(t txn) error {
		n, err := t.exec(ctx, `UPDATE managed_devices SET health = $1, last_seen_ms = $2, updated_at_ms = $2 WHERE device_id = $3`, health, now, id)
		if err == nil && n == 0 {
			return storeError(fault.CodeDeviceNotFound, "no managed device has this id")
		}
		return err
	})
	if err != nil {
		return Device{}, err
	}
	return s.Device(ctx, id)
}

func (s *store) Device(ctx context.Context, deviceID string) (Device, error) {
	id, err := identifier(deviceID, "device id")
	if err != nil {
		return Device{}, err
	}
	return s.oneDevice(ctx, `SELECT `+deviceColumns+` FROM managed_devices WHERE device_id = $1`, id)
}

func (s *store) DeviceBySerial(ctx context.Context, serial string) (Device, error) {
	sn, err := identifier(serial, "adb serial")
	if err != nil {
		return Device{}, err
	}
	return s.oneDevice(ctx, `SELECT `+deviceColumns+` FROM managed_devices WHERE serial = $1`, sn)
}

func (s *store) oneDevice(ctx context.Context, q string, arg string) (Device, error) {
	d, err := scanDevice(s.be.reader().queryRow(ctx, q, arg))
	if errors.Is(err, errNoRows) {
		return Device{}, storeError(fault.CodeDeviceNotFound, "no managed device matches")
	}
	if err != nil {
		return Device{}, asFault(err)
	}
	return d.Device, nil
}

func (s *store) Devices(ctx context.Context) ([]Device, error) {
	ds, err := queryDevices(ctx, s.be.reader(), `SELECT `+deviceColumns+` FROM managed_devices ORDER BY device_id`)
	if err != nil {
		return nil, asFault(err)
	}
	out := make([]Device, len(ds))
	for i, d := range ds {
		out[i] = d.Device
	}
	return out, nil
}

func queryDevices(ctx context.Context, q querier, sql string, args ...any) ([]*deviceRow, error) {
	rs, err := q.query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []*deviceRow
	for rs.Next() {
		d, err := scanDevice(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rs.Err()
}
