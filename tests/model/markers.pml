/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Model of the marker protocol (docs/markers.md): three writers (driver,
 * toolkit, cuda) that invalidate / publish / fail under the folder lock,
 * any of which may crash at any step (the kernel then drops its flock),
 * and a reader that checks the invariant in every reachable state:
 *
 *   a present marker's whole upstream chain is present, with the
 *   generations that it records.
 *
 * A marker is its generation (0 = absent) plus the parent generation it
 * recorded; a write is one rename, so it is one atomic step.  Generations
 * cycle through 1..NGEN (enough to tell "re-published" from "the same").
 *
 * Variants that must FAIL (the model catches the bug):
 *   -DBUG_OWN_FIRST   invalidate removes the own marker before the dependants
 *   -DBUG_NO_LOCK     writers do not take the lock (check-then-write races)
 *   -DBUG_NO_CHECK    publish does not check that the parent is present
 */
#define NGEN 3
#define NOBODY 255

byte drv = 0;                 /* driver-ready: generation */
byte tk = 0; byte tk_rec = 0; /* toolkit-ready: generation, DRIVER_GENERATION */
byte cu = 0; byte cu_rec = 0; /* cuda-ready: generation, TOOLKIT_GENERATION */
byte next_gen = 1;
byte holder = NOBODY;         /* who holds the flock */
bool crash[3];

#ifdef BUG_NO_LOCK
inline lock(me) { skip }
inline unlock(me) { skip }
#else
inline lock(me) { atomic { holder == NOBODY -> holder = me } }
inline unlock(me) { holder = NOBODY }
#endif

inline fresh(g) { atomic { g = next_gen; next_gen = (next_gen % NGEN) + 1 } }

/* Remove cuda-ready, then toolkit-ready: one unlink per step. */
inline rm_cu() { atomic { cu = 0; cu_rec = 0 } }
inline rm_tk() { atomic { tk = 0; tk_rec = 0 } }

proctype Driver()
{
        byte g;
        do
        :: {
                /* invalidate(driver) */
                lock(0);
#ifdef BUG_OWN_FIRST
                drv = 0; rm_cu(); rm_tk();
#else
                rm_cu(); rm_tk(); drv = 0;
#endif
                unlock(0);
                /* validate, then publish or fail */
                if
                :: lock(0); fresh(g); rm_cu(); rm_tk(); drv = g; unlock(0)
                :: lock(0); rm_cu(); rm_tk(); drv = 0; unlock(0)
                fi
           } unless { crash[0] -> atomic { crash[0] = false; if :: holder == 0 -> holder = NOBODY :: else -> skip fi } }
        od
}

proctype Toolkit()
{
        byte g, rec;
        do
        :: {
                lock(1); rm_cu(); rm_tk(); unlock(1);
                lock(1);
                rec = drv;
#ifndef BUG_NO_CHECK
                if
                :: rec != 0 ->
#else
                if
                :: true ->
#endif
                        fresh(g); rm_cu();
                        atomic { tk = g; tk_rec = rec }
                :: else -> skip /* -ESTALE: nothing written */
                fi;
                unlock(1)
           } unless { crash[1] -> atomic { crash[1] = false; if :: holder == 1 -> holder = NOBODY :: else -> skip fi } }
        od
}

proctype Cuda()
{
        byte g, rec;
        do
        :: {
                lock(2); rm_cu(); unlock(2);
                lock(2);
                /* parent READY: present and its own chain consistent */
                rec = tk;
                if
                :: rec != 0 && drv != 0 && tk_rec == drv ->
                        fresh(g);
                        atomic { cu = g; cu_rec = rec }
                :: else -> skip
                fi;
                unlock(2)
           } unless { crash[2] -> atomic { crash[2] = false; if :: holder == 2 -> holder = NOBODY :: else -> skip fi } }
        od
}

active proctype Crasher()
{
        do
        :: crash[0] = true
        :: crash[1] = true
        :: crash[2] = true
        od
}

active proctype Reader()
{
        do
        :: atomic {
                assert(tk == 0 || (drv != 0 && tk_rec == drv));
                assert(cu == 0 || (tk != 0 && cu_rec == tk && drv != 0 && tk_rec == drv))
           }
        od
}

init
{
        atomic { run Driver(); run Toolkit(); run Cuda() }
}
