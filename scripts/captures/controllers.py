"""Subclasses of Bumble's virtual ``Controller`` for the fault scenarios.

Bumble 0.0.236's controller is an idealised one: it never runs out of
connections or buffers, acknowledges every ACL packet at once, never loses a
link and never completes a cancelled connection attempt.  Each class below
changes exactly one of those behaviours so that a scenario can show a problem
the way a real controller reports it.  Every change is visible only through
HCI (what the host's btsnoop records); nothing on the air is simulated.
"""

from __future__ import annotations

import asyncio
import collections
import logging

from bumble import hci, ll
from bumble.controller import Controller

logger = logging.getLogger(__name__)


class CancellingController(Controller):
    """LE Create Connection Cancel ends the pending attempt like a real controller.

    Stock Bumble answers the Cancel with Command Complete (success) but keeps
    the attempt pending and never reports it.  Core v5.4 Vol 4 Part E 7.8.13:
    after the Command Complete of a successful cancel, the controller shall send
    an LE (Enhanced) Connection Complete event with status Unknown Connection
    Identifier (0x02).  This class does that (handle 0x0000, the peer address of
    the cancelled command, zero parameters), and answers Command Disallowed
    (0x0C) when no attempt is pending.
    """

    def on_hci_le_create_connection_cancel_command(
        self, command: hci.HCI_LE_Create_Connection_Cancel_Command
    ) -> hci.HCI_StatusReturnParameters:
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        event = hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
            connection_handle=0,
            role=hci.Role.CENTRAL,
            peer_address_type=pending.peer_address.address_type,
            peer_address=pending.peer_address,
            connection_interval=0,
            peripheral_latency=0,
            supervision_timeout=0,
            central_clock_accuracy=0,
        )
        # send_hci_packet() queues with call_soon; deferring by one more loop
        # iteration puts the event after the Command Complete of this command.
        asyncio.get_running_loop().call_soon(self.send_hci_packet, event)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)


class LimitedController(Controller):
    """A controller with room for ``max_le_connections`` LE connections (default 2).

    Stock Bumble accepts any number.  When the table is full, LE Create
    Connection is rejected in its Command Status with Connection Limit Exceeded
    (0x09), as Apache NimBLE's controller does (``ble_ll_conn_hci_create``:
    "Make sure we can accept a connection!" -> ``BLE_ERR_CONN_LIMIT``); the
    attempt never starts, so no Connection Complete follows.
    """

    max_le_connections = 2

    def on_hci_le_create_connection_command(
        self, command: hci.HCI_LE_Create_Connection_Command
    ) -> None:
        if len(self.le_connections) >= self.max_le_connections:
            self._send_hci_command_status(
                hci.HCI_ErrorCode.CONNECTION_LIMIT_EXCEEDED_ERROR, command.op_code
            )
            return None
        return super().on_hci_le_create_connection_command(command)


class PacedController(Controller):
    """Few LE ACL buffers, freed a few at a time on a connection-interval timer.

    Stock Bumble reports 64 LE ACL buffers and sends one Number Of Completed
    Packets event per host packet as soon as it arrives.  This controller
    reports ``total_num_le_acl_data_packets`` (4) buffers of 27 bytes in LE
    Read Buffer Size [v2] and completes at most ``completions_per_interval`` (2)
    packets per connection every ``interval`` (15 ms, the central's connection
    interval), in one NOCP event per connection, like a link layer that sends
    two packets per connection event.  Data still reaches the peer as soon as
    the host sends it.  ``hold = True`` stops all completions (a controller
    that loses track of sent packets); buffers of a connection are dropped
    without NOCP when it disconnects, as the Core spec allows.
    """

    total_num_le_acl_data_packets = 4
    completions_per_interval = 2
    interval = 0.015  # seconds

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hold = False
        self._pending: collections.OrderedDict[int, int] = collections.OrderedDict()
        self._timer: asyncio.TimerHandle | None = None

    def on_hci_acl_data_packet(self, packet: hci.HCI_AclDataPacket) -> None:
        connection = self.find_connection_by_handle(packet.connection_handle)
        if connection is None:
            logger.warning("no connection for handle 0x%04X", packet.connection_handle)
            return
        connection.assembler.feed_packet(packet)  # forwards complete L2CAP PDUs to the link
        self._pending[packet.connection_handle] = self._pending.get(packet.connection_handle, 0) + 1
        self._arm()

    def release(self) -> None:
        """Resume completions after ``hold``."""
        self.hold = False
        self._arm()

    def _arm(self) -> None:
        if self._timer is None and not self.hold and any(self._pending.values()):
            self._timer = asyncio.get_running_loop().call_later(self.interval, self._tick)

    def _tick(self) -> None:
        self._timer = None
        if self.hold:
            return
        for handle, count in list(self._pending.items()):
            done = min(count, self.completions_per_interval)
            if done:
                self._pending[handle] = count - done
                self.send_hci_packet(
                    hci.HCI_Number_Of_Completed_Packets_Event(
                        connection_handles=[handle], num_completed_packets=[done]
                    )
                )
        self._arm()

    def on_le_disconnected(self, connection, reason: int) -> None:
        self._pending.pop(connection.handle, None)
        super().on_le_disconnected(connection, reason)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class LinkLossController(Controller):
    """Can lose a link with a supervision timeout, which stock Bumble never does.

    ``supervision_timeout(handle)`` reports Disconnection Complete with reason
    Connection Timeout (0x08) for that connection and forgets it, as a real
    controller does when it hears nothing from the peer for the supervision
    timeout; no LL_TERMINATE_IND goes to the peer (it is gone).
    """

    def supervision_timeout(self, connection_handle: int) -> None:
        connection = self.find_le_connection_by_handle(connection_handle)
        if connection is None:
            raise ValueError(f"no LE connection 0x{connection_handle:04X}")
        self.on_le_disconnected(connection, hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR)


class LargeBufferController(Controller):
    """LE ACL buffers of 251 bytes (LE Data Length Extension size) instead of 27.

    The host then sends any ATT PDU up to 247 bytes in one ACL packet, so an
    oversized Write Command is a single frame (no L2CAP fragmentation).
    """

    le_acl_data_packet_length = 251


class LocalTerminationController(Controller):
    """Reports a disconnection the host asked for with reason 0x16, like a real controller.

    Stock Bumble repeats the reason given to HCI Disconnect (e.g. 0x13) in the
    local Disconnection Complete.  Core v5.4 Vol 4 Part E 7.1.6: the remote
    side receives the reason of the command (in LL_TERMINATE_IND), while the
    local controller reports Connection Terminated By Local Host (0x16), as
    Android captures show.  This class sends LL_TERMINATE_IND with the
    command's reason and reports 0x16 to its own host.
    """

    def on_hci_disconnect_command(self, command: hci.HCI_Disconnect_Command) -> None:
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None or self.link is None:
            return super().on_hci_disconnect_command(command)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        connection.send_ll_control_pdu(ll.TerminateInd(command.reason))
        self.on_le_disconnected(
            connection, hci.HCI_ErrorCode.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR
        )
        return None


class UpdateRefusingController(Controller):
    """LE Connection Update fails in its LE Connection Update Complete, with 0x20.

    Stock Bumble applies every LE Connection Update.  This controller accepts
    the command (Command Status 0x00: the parameters are valid HCI values), then
    reports LE Connection Update Complete with status Unsupported LL Parameter
    Value (0x20) and the parameters still in force (those of the connection's
    LE Create Connection), as a controller does when the link layer procedure
    is rejected (Core v5.4 Vol 4 Part E 7.7.65.3, Vol 6 Part B 5.1.7).  Nothing
    changes on the link and nothing is sent to the peer.
    """

    _in_force: tuple[int, int, int] = (0, 0, 0)

    def on_hci_le_create_connection_command(self, command) -> None:
        self._in_force = (
            command.connection_interval_min,
            command.max_latency,
            command.supervision_timeout,
        )
        return super().on_hci_le_create_connection_command(command)

    def on_hci_le_connection_update_command(
        self, command: hci.HCI_LE_Connection_Update_Command
    ) -> None:
        if self.find_le_connection_by_handle(command.connection_handle) is None:
            return super().on_hci_le_connection_update_command(command)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        interval, latency, timeout = self._in_force
        event = hci.HCI_LE_Connection_Update_Complete_Event(
            status=hci.HCI_ErrorCode.UNSUPPORTED_LMP_OR_LL_PARAMETER_VALUE_ERROR,
            connection_handle=command.connection_handle,
            connection_interval=interval,
            peripheral_latency=latency,
            supervision_timeout=timeout,
        )
        # After the Command Status (queued with call_soon), as a real link layer answers later.
        asyncio.get_running_loop().call_later(0.05, self.send_hci_packet, event)
        return None



class PassiveScanController(Controller):
    """A passive scan reports advertisements only, no scan responses.

    Stock Bumble reports every legacy advertising PDU twice, as the
    advertisement and as a scan response, even when the host asked for a
    passive scan (LE_Scan_Type 0x00), in which the controller sends no
    SCAN_REQ and so receives no SCAN_RSP (Core v5.4 Vol 6 Part B 4.4.3.1).
    This class drops the SCAN_RSP reports of a passive legacy scan.
    """

    def send_hci_packet(self, packet) -> None:
        if (
            isinstance(packet, hci.HCI_LE_Advertising_Report_Event)
            and self.le_scan_type == 0
            and all(
                report.event_type == hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP
                for report in packet.reports
            )
        ):
            return
        super().send_hci_packet(packet)
