/* sable_board_run (board.h): apart from board.c, whose logic the host tests link without the
 * firmware itself. */
#include "board.h"

void sable_board_run(struct sable_board *board) {
	struct sable_fw_platform platform;
	sable_board_platform(board, &platform);
	for (;;) {
		sable_board_wait_for_boot(board);
		sable_fw_main(&platform);
	}
}
