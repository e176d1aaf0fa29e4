'''A fake Location portal (org.freedesktop.portal.Location) for ccrelay's
tests: a python3-dbusmock template on the session bus.

Parameters (JSON, `-p`):
  response   0   the Request.Response code Start leads to (0 granted,
                 1 refused by the user, 2 other)
  error      ""  when set, Start fails with this D-Bus error name
                 (org.freedesktop.portal.Error.NotAllowed: location is off)
  fix        [lat, lon, accuracy] sent after a granted Start

Mock method, for the tests: PushFix(ddd) sends LocationUpdated to every session.
'''

import time

import dbus
import dbus.service
import dbusmock
from dbusmock import MOCK_IFACE

BUS_NAME = 'org.freedesktop.portal.Desktop'
MAIN_OBJ = '/org/freedesktop/portal/desktop'
MAIN_IFACE = 'org.freedesktop.portal.Location'
SYSTEM_BUS = False

REQUEST_IFACE = 'org.freedesktop.portal.Request'
state = {'response': 0, 'error': '', 'fix': (30.6586, 104.0648, 20.0), 'sessions': []}


def load(mock, parameters):
    state['response'] = parameters.get('response', 0)
    state['error'] = parameters.get('error', '')
    state['fix'] = tuple(parameters.get('fix', state['fix']))
    mock.AddProperties(MAIN_IFACE, {'version': dbus.UInt32(1)})
    mock.AddMethods(MOCK_IFACE, [('PushFix', 'ddd', '', push_fix)])


def sender_path(sender):
    return sender[1:].replace('.', '_')


@dbus.service.method(MAIN_IFACE, in_signature='a{sv}', out_signature='o', sender_keyword='sender')
def CreateSession(self, options, sender):
    token = options.get('session_handle_token', 'session')
    path = '/org/freedesktop/portal/desktop/session/%s/%s' % (sender_path(sender), token)
    self.AddObject(path, 'org.freedesktop.portal.Session', {}, [('Close', '', '', '')])
    state['sessions'].append(path)
    return dbus.ObjectPath(path)


@dbus.service.method(MAIN_IFACE, in_signature='osa{sv}', out_signature='o', sender_keyword='sender')
def Start(self, session, parent_window, options, sender):
    if state['error']:
        raise dbus.exceptions.DBusException('Location services are disabled', name=state['error'])
    token = options.get('handle_token', 'request')
    request = '/org/freedesktop/portal/desktop/request/%s/%s' % (sender_path(sender), token)
    self.AddObject(request, REQUEST_IFACE, {}, [])
    results = {'accuracy': dbus.UInt32(5)} if state['response'] == 0 else {}
    dbusmock.get_object(request).EmitSignal(REQUEST_IFACE, 'Response', 'ua{sv}',
                                            [dbus.UInt32(state['response']), dbus.Dictionary(results, signature='sv')])
    if state['response'] == 0:
        emit_fix(self, session, *state['fix'])
    return dbus.ObjectPath(request)


def emit_fix(mock, session, latitude, longitude, accuracy):
    now = time.time()
    location = {
        'Latitude': dbus.Double(latitude), 'Longitude': dbus.Double(longitude), 'Accuracy': dbus.Double(accuracy),
        'Altitude': dbus.Double(-1.7976931348623157e308), 'Speed': dbus.Double(-1.0), 'Heading': dbus.Double(-1.0),
        'Description': 'fake portal fix',
        'Timestamp': dbus.Struct((dbus.UInt64(int(now)), dbus.UInt64(int((now % 1) * 1e6))), signature='tt'),
    }
    mock.EmitSignal(MAIN_IFACE, 'LocationUpdated', 'oa{sv}', [dbus.ObjectPath(session), dbus.Dictionary(location, signature='sv')])


def push_fix(mock, latitude, longitude, accuracy):
    for session in state['sessions']:
        emit_fix(mock, session, latitude, longitude, accuracy)
