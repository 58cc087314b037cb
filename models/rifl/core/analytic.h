#pragma once
// Closed-form bandwidth ratio of a RIFL link under independent bit errors,
// from the frame error probability and the cost of one recovery as the
// transmitter and receiver state machines (rifl_link.h) spend it.
#include <cstdint>

#include "models/rifl/core/rifl_link.h"

namespace fabricsim::rifl {

/// P(a frame of `frame_bits` bits has >= 1 bit error) = 1 - (1 - ber)^F.
double frame_error_probability(double ber, std::uint32_t frame_bits);

/// Frame slots lost per recovery, in steady state (after the first one).
///
/// A frame sent by end A at slot t0 fails at end B (one-way delay H slots).
/// - forward (A's fresh data): the 2H + 12 frames A sends until it learns of
///   the error (B's detection, 1 reaction slot, 8 consecutive retransmit
///   requests, A's reaction) are replayed, so they cost nothing extra; A
///   then spends 1 abnormal slot, B idle slots (its retransmit counter runs
///   from where the previous recovery left it, 2B + 1, to 3B and wraps),
///   2B replay slots (B buffered data frames interleaved with idle /
///   request frames) and 1 exit slot: 3B + 2.
/// - reverse (B's fresh data): B sends retransmit requests instead of data
///   from its reaction until the replayed frame just before the failed one
///   arrives (B idle slots, then replay slot 2 (B - 2H - 13) of that frame,
///   then H slots of flight): 3B - 2H - 13 slots.
/// Sources: rifl.md (the RTL's fixed replay sequence), the states in
/// rifl_link.cpp; a unit test checks both figures against a scripted error.
struct RecoveryCost {
  double forward_slots;
  double reverse_slots;
};
RecoveryCost recovery_cost(const RiflDerived& d);

/// The retransmit counter's phase: why one recovery's cost depends on the
/// ones before it. The counter rc (0..3B) of a transmitter is not reset
/// between recoveries (rifl_link.cpp, RTL rifl_tx.v):
/// - as the forwarder (its data failed), Retrans runs rc from where it was
///   to 3B (idle part, only if rc >= 2B), wraps to 0, replays 2B slots and
///   leaves at rc = 2B: C_fwd(rc) = 2B + 2 + (rc >= 2B ? 3B - rc : 0) slots
///   (3B + 2 after a forward recovery, 2B + 2 from rc = 0);
/// - as the requester (the far end's data failed) it toggles Send Retrans
///   <-> Retrans, sending retransmit requests, for R = C_fwd - 2H - 16 slots
///   (its own data stalls R + 1 = C_fwd - 2H - 15 slots: recovery_cost's
///   C_rev), and rc grows by one every other slot, R / 2 in all; past 3B it
///   wraps to 0, and Send Retrans holds it at 0 (a requester at rc = 0 does
///   not toggle).
/// So the pair (rc_A, rc_B) is a Markov chain driven by which direction
/// fails; these functions are its steps. Checked exactly against a scripted
/// sequence of isolated errors (RiflAnalytic.RetransmitCounterPhaseChain).
double forward_cost_at(const RiflDerived& d, std::uint32_t rc);
/// The requester's rc after a recovery in which the far end spent c_fwd slots.
std::uint32_t requester_rc_after(const RiflDerived& d, std::uint32_t rc, double c_fwd);

/// Stationary mean costs of isolated recoveries over the counter-phase chain
/// when a recovery is an A->B failure with probability q_ab (= p_ab / (p_ab +
/// p_ba)), else B->A: slots the A->B (B->A) stream loses per A->B failure
/// and per B->A failure. With q_ab = 1/2 (the study) each direction's
/// forward mean is ~2.3B rather than 3B: the old per-recovery cost
/// 3B + 2 + 3B - 2H - 13 = 1499 slots becomes ~1251 at B = 256, H = 13.
struct PhaseCosts {
  double ab_per_ab, ab_per_ba;  ///< A->B stream: per A->B failure (forward), per B->A failure (reverse)
  double ba_per_ba, ba_per_ab;  ///< B->A stream: per B->A failure (forward), per A->B failure (reverse)
};
PhaseCosts stationary_phase_costs(const RiflDerived& d, double q_ab);

/// The first-order model this file shipped first, kept for comparison
/// (docs/validation.md section 7):
///   ratio = 1 / (1 + p_ab K_ab + p_ba K_ba),
///   K = C_fwd + C_rev + (N - 1) (max(0, C_fwd - L) + max(0, C_rev - L)),
/// with recovery_cost's steady-state C and L = fc_on. It agrees with the
/// simulation to 3.2e-7 only because two of its errors cancel there: C is
/// ~20 % too high (the counter phase) and the lanes' bank is not L but
/// isolated_bank (a few frames).
double analytic_bandwidth_ratio_first_order(const RiflConfig& c, const RiflDerived& d);

/// Same-direction errors during a recovery. The receiver rolled its counter
/// back kRollback = 16 frames before the failed one, so of the replayed
/// frames only the last 16 + 2H + 12 (those from the rolled-back counter on:
/// 15 before the failed frame, the failed one, the 2H + 12 sent until the
/// sender learnt of it) matter; with the interleaving (one data frame every
/// other slot) and the exit slot they span the last 2 (2H + 28) + 2 = 4H + 58
/// slots of the recovery. A hit there (on a replayed frame or the control
/// frame between two) restarts the whole fixed sequence after the current
/// one: one more full recovery. A hit earlier in the recovery costs nothing
/// (that frame is replayed again anyway or not needed). So a recovery is
/// followed by another with probability q = p W, and a failure costs
/// q / (1 - q) restarts (geometric) beyond its own recovery, each at
/// restart_cost. Checked against two scripted errors
/// (RiflAnalytic.SecondErrorCostsOnlyInTheReplayWindow).
double replay_window_slots(const RiflDerived& d);

/// Slots one restart (a same-direction hit in the replay window) adds to the
/// failing direction's stream (forward) and to the other one (reverse),
/// whatever the phase of the recovery it restarts. The forwarder does not
/// leave Retrans at rc = 2B (the remote retransmit flag is up again): its
/// counter runs on through the idle part (2B .. 3B), wraps and replays 2B
/// slots, so the restart is a steady-state recovery appended to the current
/// one: forward 3B + 2 slots, also after a first recovery that cost only
/// 2B + 2. The requester's data stops the same 3B + 2 more, except for a hit
/// in the last 2H + 15 slots of the window (its data had resumed when the
/// hit's requests began): x slots before the window's end it loses
/// 3B - 2H - 13 + x. `reverse` is the mean over the W slots of the window.
/// (The model charged the chain's mean phase cost, ~2.5B, per restart
/// before.) Checked against scripted hits in the window of a recovery at
/// rc = 0 and at rc = 2B (RiflAnalytic.RestartIsASteadyStateRecovery).
RecoveryCost restart_cost(const RiflDerived& d);

/// Frames a bonded lane holds ahead of the reordered stream (its
/// reorder-buffer occupancy) when its own recovery starts, N > 1:
/// - isolated = max(0, fc_off - (2H + 1)): after the last stall the leaders
///   were paused; the stream drains them to fc_off, the resume then takes a
///   round trip (1 slot to send, H out, H for the new data back) during
///   which they drain further. An isolated failure costs the stream C - isolated.
/// - overlap = max(0, fc_on - 12): a lane that keeps streaming while the
///   stream is stalled by another lane banks until its occupancy reaches
///   fc_on; the pause then takes 2H + 1 slots to stop it (send, H out, H of
///   frames in flight), while the failing lane's lost frames count from its
///   failed frame, 2H + 13 slots before it stopped; the 2H cancels: fc_on - 12.
///   A failure at offset s into another lane's stall extends the stall by
///   max(0, s + C_2 - C_1 - overlap).
/// Both checked against scripted errors on two lanes
/// (RiflAnalytic.FlowControlBanksOfBondedLanes). 0 for one lane.
struct LaneBanks {
  double isolated, overlap;  ///< frames
};
LaneBanks lane_banks(const RiflConfig& c, const RiflDerived& d);

/// Other-direction errors on the same lane during a recovery. While the
/// primary failure's forwarder X replays, its far end Y sends retransmit
/// requests (from its reaction, H + 3 slots after the failure, until the
/// replayed failed frame arrives, F1 - H - 12). A hit on one of them (X's
/// receiver rejects it and rolls back 16 frames) makes Y a forwarder too.
/// Placed as if isolated, Y's recovery would stall the primary's forward
/// stream until dd + F2 - H - 12 and its reverse stream until
/// dd + 2H + 13 + F2. It ends later: the frames X's receiver needs are the
/// newest of Y's buffer (Y stopped sending data when it became the
/// requester), so they come at the end of Y's replay, 2 (2H + 13) + 2 =
/// 4H + 28 slots later than an isolated failed frame, and Y leaves Retrans
/// only after X's requests stop and its flag drops (H, 16 data-or-idle
/// frames, 3 reaction slots): 2H + 19 later. (8 slots of each are X's 8
/// requests interleaved with its replayed frames; a hit X detects in the
/// idle part of its sequence, 3B - rc slots, saves them.) A hit at dd thus
/// extends the forward stream's stall by max(0, dd - (F1 - F2 - H - 3)) and the
/// reverse stream's by max(0, dd - (F1 - F2 - 5H - 44)); earlier hits are
/// absorbed. Once X's requests for the hit reach Y after Y has left its
/// requester role (dd >= F1 - 3H - 28), Y starts an ordinary recovery: a
/// later hit no longer ends later; the forward stream's extension falls
/// one slot per slot of dd, the reverse stream's about two, to the hit's own
/// F2 (the two recoveries then run one after the other). Returns the sum of
/// that extension over the request slots dd = H + 3 .. F1 - H - 13 (slots);
/// primary_stream: the primary's forward stream.
/// Checked against scripted pairs at three cable lengths
/// (RiflAnalytic.ReverseHitDuringARecovery).
double reverse_overlap_slots(const RiflDerived& d, double f_primary, double f_hit, bool primary_stream);
/// Expected extension when each request slot is hit with probability p.
/// Only the first hit counts: it makes Y the forwarder, and a later hit on
/// Y's frames falls in Y's own recovery (free before its replay window;
/// restarts there are in the restart factor). So this is the sum over dd of
/// p (1 - p)^(dd - (H + 3)) times the extension: p x reverse_overlap_slots
/// to first order.
double reverse_overlap_expected(const RiflDerived& d, double f_primary, double f_hit, bool primary_stream, double p);
/// The extension by one hit at dd slots after the primary failure (0
/// outside the request slots).
double reverse_hit_extension(const RiflDerived& d, double f_primary, double f_hit, bool primary_stream, double dd);

/// A bonded lane paused by flow control (its reorder buffer is full because
/// another lane stalls the stream) that fails in the other direction: its
/// requester end is done after C_rev, but it cannot send data until the far
/// end, busy replaying, has sent the resume: the far end's recovery ends
/// (2H + 13) + C_fwd after the failure, the resume needs 1 + H slots, and
/// the requester's own stall began H + 3 after it and would last C_fwd -
/// (2H + 15): 4H + 25 slots more. Checked against scripted errors on two
/// lanes (RiflAnalytic.FlowControlBanksOfBondedLanes).
double resume_wait_slots(const RiflDerived& d);

/// Slots a failure stops one direction's data on its lane: own = a failure
/// of this direction, rev = of the other.
struct FailCost {
  double own = 0, rev = 0;
};

/// The terms of analytic_bandwidth_ratio, per direction of traffic.
struct AnalyticTerms {
  double p_ab = 0, p_ba = 0;              ///< frame error probability per lane slot
  PhaseCosts phase{};                     ///< counter-phase chain's mean costs (slots)
  double window_slots = 0;                ///< replay_window_slots
  double restart_ab = 1, restart_ba = 1;  ///< 1 / (1 - p W): recoveries per failure
  RecoveryCost restart{};                 ///< restart_cost: slots per restart (forward, reverse)
  LaneBanks banks{};
  double resume_wait = 0;                   ///< resume_wait_slots (bonded lanes)
  FailCost fail_cost_ab{}, fail_cost_ba{};  ///< per stream, with restarts and reverse overlaps
  double stall_ab = 0, stall_ba = 0;        ///< mean lane stall per failure, slots
  double blocking_ab = 0, blocking_ba = 0;  ///< ... of which the stream is blocked by it
  double ratio_ab = 1, ratio_ba = 1;
};

/// Bandwidth ratio (delivered at this BER / error free) of the bonded link
/// when both directions have independent errors: each direction's
/// reordered stream flows while no lane blocks it.
/// - Failures: each lane fails at lambda = p_ab + p_ba per slot while it is
///   not recovering (a frame error of either direction stops both
///   directions' data on that lane).
/// - Lane stall per failure (FailCost): the counter-phase chain's
///   stationary mean (stationary_phase_costs), plus p W / (1 - p W)
///   restarts by same-direction hits in the replay window
///   (replay_window_slots) at restart_cost each, plus
///   reverse_overlap_expected for the other
///   direction's hits during it; + resume_wait_slots for a failure of the
///   other direction on a lane that is paused.
/// - Blocking: a lane blocks the stream for its stall minus the time its
///   bank lasts (lane_banks: isolated if the stream was flowing when it
///   failed, overlap if another lane had stalled it and this lane was
///   paused); the bank drains only while no other lane blocks, so it lasts
///   bank / r_o slots, r_o = (1 - f)^(N - 1).
/// - Lanes fail independently: the fraction of time lane l blocks is
///   f = lambda S / (1 + lambda C_m) (S its mean blocking, C_m its mean
///   stall per failure; a failure finds the stream stalled by the others
///   with probability 1 - r_o), solved for f by fixed-point iteration, and
///   ratio = (1 - f)^N. One lane: 1 / (1 + p_ab C_own + p_ba C_rev).
/// The mean of the two directions when B->A is loaded. Computed from B, H,
/// N, frame bits, fc_on / fc_off and the BER only. Not in it (docs/
/// validation.md section 7): hits during a hit's own recovery beyond the
/// geometric restarts (third order); the lanes' blocking is treated as
/// independent while in the lane machine it is close to mutually exclusive
/// (a lane failing while another blocks keeps its bank until that one is
/// back), which makes the ratio optimistic from BER ~3e-6; clock
/// compensation and lane skew.
AnalyticTerms analytic_terms(const RiflConfig& c, const RiflDerived& d);
double analytic_bandwidth_ratio(const RiflConfig& c, const RiflDerived& d);

}  // namespace fabricsim::rifl
