'''A fake GeoClue2 for ccrelay's tests: a python3-dbusmock template built
with dbusmock's object API (Manager, Client and Location objects).

Parameters (JSON, `-p`):
  refusal    ""   Start succeeds; otherwise the AccessDenied message Start
                  answers with, as real geoclue words it
  available  8    the Manager's AvailableAccuracyLevel
  fix        [lat, lon, accuracy] of the first fix

Mock methods on the Manager, for the tests:
  SetRefusal(s)   the next Start answers with this refusal ("" grants)
  PushFix(ddd)    a new Location object and LocationUpdated on the client
  SetActive(b)    the client's Active property (PropertiesChanged)
'''

import time

import dbus
import dbusmock
from dbusmock import MOCK_IFACE

BUS_NAME = 'org.freedesktop.GeoClue2'
MAIN_OBJ = '/org/freedesktop/GeoClue2/Manager'
MAIN_IFACE = 'org.freedesktop.GeoClue2.Manager'
SYSTEM_BUS = True

CLIENT_IFACE = 'org.freedesktop.GeoClue2.Client'
LOCATION_IFACE = 'org.freedesktop.GeoClue2.Location'
ACCESS_DENIED = 'org.freedesktop.DBus.Error.AccessDenied'

state = {'refusal': '', 'fix': (30.6586, 104.0648, 65.0), 'clients': 0, 'locations': 0, 'client': None}


def load(mock, parameters):
    state['refusal'] = parameters.get('refusal', '')
    state['fix'] = tuple(parameters.get('fix', state['fix']))
    mock.AddProperties(MAIN_IFACE, {
        'InUse': dbus.Boolean(False),
        'AvailableAccuracyLevel': dbus.UInt32(parameters.get('available', 8)),
    })
    mock.AddMethods(MAIN_IFACE, [
        ('GetClient', '', 'o', get_client),
        ('CreateClient', '', 'o', get_client),
        ('DeleteClient', 'o', '', delete_client),
    ])
    mock.AddMethods(MOCK_IFACE, [
        ('SetRefusal', 's', '', set_refusal),
        ('PushFix', 'ddd', '', push_fix),
        ('SetActive', 'b', '', set_active),
    ])


def get_client(manager):
    state['clients'] += 1
    path = '/org/freedesktop/GeoClue2/Client/%d' % state['clients']
    manager.AddObject(path, CLIENT_IFACE, {
        'Location': dbus.ObjectPath('/'),
        'DistanceThreshold': dbus.UInt32(0),
        'TimeThreshold': dbus.UInt32(0),
        'DesktopId': '',
        'RequestedAccuracyLevel': dbus.UInt32(0),
        'Active': dbus.Boolean(False),
    }, [])
    dbusmock.get_object(path).AddMethods(CLIENT_IFACE, [('Start', '', '', start), ('Stop', '', '', stop)])
    state['client'] = path
    return dbus.ObjectPath(path)


def delete_client(manager, path):
    manager.RemoveObject(path)
    if state['client'] == path:
        state['client'] = None


def start(client):
    desktop_id = client.Get(CLIENT_IFACE, 'DesktopId')
    if not desktop_id:
        # Real geoclue refuses a client without a desktop id.
        raise dbus.exceptions.DBusException("'DesktopId' property must be set", name=ACCESS_DENIED)
    if state['refusal']:
        raise dbus.exceptions.DBusException(state['refusal'], name=ACCESS_DENIED)
    client.UpdateProperties(CLIENT_IFACE, {'Active': dbus.Boolean(True)})
    emit_fix(client, *state['fix'])


def stop(client):
    client.UpdateProperties(CLIENT_IFACE, {'Active': dbus.Boolean(False)})


def emit_fix(client, latitude, longitude, accuracy):
    state['locations'] += 1
    path = '/org/freedesktop/GeoClue2/Location/%d' % state['locations']
    now = time.time()
    client.AddObject(path, LOCATION_IFACE, {
        'Latitude': dbus.Double(latitude),
        'Longitude': dbus.Double(longitude),
        'Accuracy': dbus.Double(accuracy),
        'Altitude': dbus.Double(-1.7976931348623157e308),
        'Speed': dbus.Double(-1.0),
        'Heading': dbus.Double(-1.0),
        'Description': 'fake fix',
        'Timestamp': dbus.Struct((dbus.UInt64(int(now)), dbus.UInt64(int((now % 1) * 1e6))), signature='tt'),
    }, [])
    old = client.Get(CLIENT_IFACE, 'Location')
    # (dbusmock 0.28 cannot wrap an object path in UpdateProperties: set it directly.)
    client.props[CLIENT_IFACE]['Location'] = dbus.ObjectPath(path)
    client.EmitSignal(CLIENT_IFACE, 'LocationUpdated', 'oo', [old, dbus.ObjectPath(path)])


def set_refusal(manager, refusal):
    state['refusal'] = refusal


def push_fix(manager, latitude, longitude, accuracy):
    emit_fix(dbusmock.get_object(state['client']), latitude, longitude, accuracy)


def set_active(manager, active):
    dbusmock.get_object(state['client']).UpdateProperties(CLIENT_IFACE, {'Active': dbus.Boolean(active)})
